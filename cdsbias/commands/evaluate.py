"""``cdsbias evaluate`` and ``cdsbias benchmarks``: score a model on registered benchmarks."""

from __future__ import annotations

import argparse
import re
import warnings
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError

#: Where ``cdsbias evaluate`` writes without ``--out``: one folder per model below it.
DEFAULT_OUT_ROOT = "cdsbias_results"
#: ``--self-debias`` without a PREFIX: the prefix of ``--axis`` (gender's without one).
AXIS_PREFIX = ""
_NOT_IN_FOLDER_NAMES = re.compile(r"[\"<>:/|\\?*\[\]]+")


def default_out(model: str, revision: str | None = None) -> Path:
    """``cdsbias_results/<model>``: the model id or path with ``/`` and other characters
    a folder name cannot hold as ``__`` (lm-evaluation-harness' rule), ``@revision`` after.

    >>> default_out("org/name").as_posix()
    'cdsbias_results/org__name'
    >>> default_out("./runs/demo/checkpoint-6", "main").as_posix()
    'cdsbias_results/runs__demo__checkpoint-6@main'
    """
    name = _NOT_IN_FOLDER_NAMES.sub("__", model).lstrip("._") or "model"
    if revision:
        name += "@" + _NOT_IN_FOLDER_NAMES.sub("__", revision)
    return Path(DEFAULT_OUT_ROOT) / name


def register(subparsers: Any) -> None:
    from cdsbias.benchmarks import DEFAULT_BENCHMARKS, OPTION_SHORTHAND_FLAGS
    from cdsbias.scoring.self_debias import DECAY_CONSTANT, EPSILON

    parser = subparsers.add_parser(
        "evaluate",
        help="score a masked LM on bias benchmarks",
        description="Score a masked LM (hub id or local folder) on one or more bias "
        "benchmarks; prints each benchmark's table and writes OUT/<benchmark>/rows.tsv and "
        f"summary.json (OUT defaults to {DEFAULT_OUT_ROOT}/<model>).",
    )
    parser.add_argument("model", help="hub model id (e.g. bert-base-uncased) or local folder")
    parser.add_argument(
        "--benchmark", "-b", default=",".join(DEFAULT_BENCHMARKS),
        help="benchmark name(s), comma-separated (see `cdsbias benchmarks`); default "
        f"{','.join(DEFAULT_BENCHMARKS)}",
    )  # fmt: skip
    parser.add_argument(
        "--out", "-o", type=Path,
        help=f"output folder (default: {DEFAULT_OUT_ROOT}/<model>, e.g. "
        f"{DEFAULT_OUT_ROOT}/org__name for the hub id org/name)",
    )  # fmt: skip
    parser.add_argument(
        "--overwrite", action="store_true",
        help="replace OUT/<benchmark>/ folders an earlier evaluation wrote (default: refuse)",
    )  # fmt: skip
    parser.add_argument(
        "--data",
        type=Path,
        help="data file, or a released data folder where the benchmark reads one (see its "
        "docs), to use instead of the default",
    )
    parser.add_argument(
        "--data-dir", type=Path,
        help="folder laid out like shared/data holding every benchmark's files",
    )  # fmt: skip
    parser.add_argument(
        "--language", help="data language, e.g. en or de (default: each benchmark's own)"
    )
    parser.add_argument(
        "--option", action="append", default=[], metavar="[NAME.]KEY=VALUE",
        help="benchmark option, repeatable; values are YAML (--option n_resamples=2000, "
        "--option NAME.KEY=VALUE for one benchmark). A bare KEY goes to every named "
        "benchmark that has it; `cdsbias benchmarks NAME` lists the options",
    )  # fmt: skip
    parser.add_argument("--batch-size", type=int, default=64, help="sequences per forward pass")
    parser.add_argument("--device", help="torch device (default: cuda, mps or cpu)")
    parser.add_argument("--revision", help="hub revision of the model")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or table")
    parser.add_argument(
        "--axis", metavar="AXIS",
        help="bias axis to measure: gender, race, religion, age, disability, "
        "sexual_orientation, nationality, physical_appearance, socioeconomic or an attribute file "
        "(FILE.tsv, FILE.json#key). Benchmarks with a category or test set per axis score "
        "the axis's (`cdsbias benchmarks NAME` says which option), --self-debias uses its "
        "prefix; their result folders are named NAME[AXIS]. Default: no axis (every "
        "category, the gender tests and prefix)",
    )  # fmt: skip
    parser.add_argument(
        "--self-debias", nargs="?", const=AXIS_PREFIX, metavar="PREFIX",
        help="score under Self-Debias (Schick et al. 2021): every masked read is decayed "
        "where the PREFIX makes a token likelier; default prefix bias-bench's for --axis "
        "(gender's without it). Costs a second forward pass per input",
    )  # fmt: skip
    parser.add_argument(
        "--self-debias-lambda", type=float, metavar="LAMBDA",
        help=f"Self-Debias decay constant (default {DECAY_CONSTANT:g})",
    )  # fmt: skip
    parser.add_argument(
        "--self-debias-epsilon", type=float, metavar="EPSILON",
        help=f"Self-Debias floor of the decay factor (default {EPSILON:g})",
    )  # fmt: skip
    for flag, (name, option, choices) in OPTION_SHORTHAND_FLAGS.items():
        parser.add_argument(
            flag, choices=choices or None, dest=f"shorthand:{name}.{option}",
            help=f"shorthand for --option {name}.{option}=VALUE",
        )  # fmt: skip
    parser.set_defaults(func=run_evaluate)

    listing = subparsers.add_parser(
        "benchmarks",
        help="list the registered benchmarks, or show one benchmark's options",
    )
    listing.add_argument("name", nargs="?", help="a benchmark: show its options and metrics")
    listing.set_defaults(func=run_list)


def run_list(args: argparse.Namespace) -> int:
    from cdsbias.benchmarks import get_benchmark, list_benchmarks
    from cdsbias.options import options_text

    if not getattr(args, "name", None):
        for name, description in list_benchmarks().items():
            languages = ", ".join(get_benchmark(name).languages)
            print(f"{name:<14} [{languages}] {description}")
        return 0
    cls = get_benchmark(args.name)
    print(f"{cls.name}: {cls.description}")
    print(f"languages: {', '.join(cls.languages)} (default {cls.languages[0]})")
    print("options (--option KEY=VALUE, or in a recipe bias_benchmarks: {NAME: {KEY: VALUE}}):")
    print(options_text(cls.Options))
    print("headline metrics:")
    for metric in cls().headline_metrics():
        print(f"  {metric.key}: {metric.label} [{metric.unit}], {metric.direction}")
    return 0


def option_specs(
    names: list[str], items: list[str], shorthand: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """``--option`` items (and ``{"NAME.KEY": value}`` of the shorthand flags) ->
    ``{benchmark: {option: value}}``.

    ``NAME.KEY=VALUE`` goes to one benchmark; a bare ``KEY=VALUE`` to every named benchmark
    whose options have KEY (an error if none has it).

    Raises:
        CdsbiasError: Malformed item, a NAME that was not selected, or a KEY no selected
            benchmark has (with the closest valid one).
    """
    import dataclasses

    from cdsbias.benchmarks import get_benchmark
    from cdsbias.options import parse_key_values, unknown_key_error

    specs: dict[str, dict[str, Any]] = {name: {} for name in names}
    fields = {
        name: {f.name for f in dataclasses.fields(get_benchmark(name).Options)} for name in names
    }
    for key, value in [*parse_key_values(items, "--option").items(), *shorthand.items()]:
        target, dot, option = key.rpartition(".")
        option = option.replace("-", "_")
        if dot:
            if target not in specs:
                raise CdsbiasError(
                    f"--option {key}: '{target}' is not among the benchmarks evaluated "
                    f"({', '.join(names)})."
                )
            specs[target][option] = value
            continue
        takers = [name for name in names if option in fields[name]]
        if not takers:
            valid = set().union(*fields.values())
            raise unknown_key_error(option, valid, f"option of {', '.join(names)}")
        for name in takers:
            specs[name][option] = value
    return specs


def build_benchmarks(names: list[str], args: argparse.Namespace) -> list[Any]:
    """Instantiates each named benchmark with the options that were given for it."""
    from cdsbias.benchmarks import build_benchmark, get_benchmark

    for name in names:
        get_benchmark(name)  # unknown names fail first, with "Did you mean"
    shorthand = {}
    for dest, value in vars(args).items():
        if dest.startswith("shorthand:") and value is not None:
            key = dest.removeprefix("shorthand:")
            name, option = key.split(".", 1)
            if name not in names:  # as for --option NAME.KEY: never dropped silently
                flag = "--" + option.replace("_", "-")
                raise CdsbiasError(
                    f"{flag} {value} (--option {key}={value}): '{name}' is not among the "
                    f"benchmarks evaluated ({', '.join(names)})."
                )
            shorthand[key] = value
    if args.data is not None and len(names) > 1:
        raise CdsbiasError("--data names one file, so it takes one --benchmark; use --data-dir.")
    specs = option_specs(names, args.option, shorthand)
    axis = getattr(args, "axis", None)
    benchmarks = [
        build_benchmark(
            name, specs[name], axis=axis, data_file=args.data, data_dir=args.data_dir,
            language=args.language,
        )
        for name in names
    ]  # fmt: skip
    if axis is not None:
        from cdsbias.axes import get_axis

        scored = get_axis(axis)
        name = scored.name
        gender_only = [b.name for b in benchmarks if not b.axis_option_names]
        if gender_only and scored.base_name != "gender":
            warnings.warn(
                f"{', '.join(gender_only)} {'measures' if len(gender_only) == 1 else 'measure'} "
                f"gender only: --axis {name} does not change "
                "what they score; leave them out of --benchmark to score the axis alone",
                stacklevel=2,
            )
    return benchmarks


def self_debias_prefix(args: argparse.Namespace) -> str:
    """The ``--self-debias`` prefix: the one given, else that of ``--axis`` (gender's).

    Raises:
        CdsbiasError: The axis has no Self-Debias prefix (a user's attribute file).
    """
    from cdsbias.axes import get_axis

    if args.self_debias != AXIS_PREFIX:
        return args.self_debias
    axis = get_axis(getattr(args, "axis", None) or "gender")
    if axis.self_debias_prefix is None:
        raise CdsbiasError(
            f"bias axis '{axis.name}' ({axis.source}) has no Self-Debias prefix; give one: "
            "--self-debias 'The following text discriminates against ...: '"
        )
    return axis.self_debias_prefix


def self_debias_settings(args: argparse.Namespace, benchmarks: list[Any]) -> Any:
    """The ``--self-debias`` settings, or None; refuses a benchmark that reads no masked
    position before the model is loaded."""
    from cdsbias.scoring.self_debias import DECAY_CONSTANT, EPSILON, SelfDebias

    constants = {"lambda": args.self_debias_lambda, "epsilon": args.self_debias_epsilon}
    if args.self_debias is None:
        given = [f"--self-debias-{name}" for name, value in constants.items() if value is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise CdsbiasError(f"{' and '.join(given)} {verb} only with --self-debias.")
        return None
    settings = SelfDebias(
        self_debias_prefix(args),
        DECAY_CONSTANT if constants["lambda"] is None else constants["lambda"],
        EPSILON if constants["epsilon"] is None else constants["epsilon"],
    )
    for benchmark in benchmarks:
        conflict = benchmark.self_debias_conflict()
        if conflict:
            raise CdsbiasError(f"--self-debias cannot score {benchmark.name}: {conflict}.")
    return settings


def run_evaluate(args: argparse.Namespace) -> int:
    from cdsbias.benchmarks import check_scorer_options, write_result
    from cdsbias.benchmarks.long_rows import check_inputs_fit
    from cdsbias.io import check_output

    names = [n.strip() for n in args.benchmark.split(",") if n.strip()]
    if not names:
        raise CdsbiasError("--benchmark names no benchmark.")
    if args.batch_size < 1:
        raise CdsbiasError(f"--batch-size must be at least 1, got {args.batch_size}.")
    if args.out is None:  # as lm-evaluation-harness: print the tables, results go here
        args.out = default_out(args.model, args.revision)
    check_output(args.out, flag="--out", folder=True, overwrite=True)
    benchmarks = build_benchmarks(names, args)
    for benchmark in benchmarks:  # OUT/<benchmark>/ of an earlier evaluation is kept
        check_output(args.out / benchmark.key, flag="--out", overwrite=args.overwrite)
    self_debias = self_debias_settings(args, benchmarks)
    # Read every data set before the (slow) model load, so bad data fails fast.
    for benchmark in benchmarks:
        _ = benchmark.rows

    from cdsbias.scoring import MaskedLMScorer

    scorer = MaskedLMScorer.from_pretrained(
        args.model,
        device=args.device,
        batch_size=args.batch_size,
        revision=args.revision,
        progress=not args.quiet,
        self_debias=self_debias,
    )
    # Options the model cannot take (SEAT's layer) and a Self-Debias prefix too long for
    # it fail before any benchmark is scored.
    check_scorer_options(benchmarks, scorer)
    check_inputs_fit(benchmarks, scorer)
    model_id = published_model_id(args.model)
    results = []
    for benchmark in benchmarks:
        result = benchmark.evaluate(scorer, annotate={"model": args.model})
        if result is None:  # only ranks > 0 of a sharded run get None
            continue
        if not args.quiet:
            print(result.report)
        for line in benchmark.published_notes(model_id, result.metrics):
            print(f"{benchmark.key} {line}")
        results.append(result)
    # Written once every benchmark has scored: a failure leaves --out as it was.
    for result in results:
        folder = write_result(result, args.out)
        tables = "".join(f", {folder / f'{table}.tsv'}" for table in result.tables)
        print(f"wrote {folder / 'rows.tsv'}{tables} and {folder / 'summary.json'}")
    return 0


def published_model_id(name_or_path: str) -> str | None:
    """The hub model whose published values apply to the model given to ``evaluate``.

    A hub id is itself; a local folder is its hub origin (``config.json``'s
    ``_name_or_path``, :func:`cdsbias.hub.hub_model_id`) unless it was trained here: a
    checkpoint or run folder (``trainer_state.json``, or ``run_info.json`` in it or its
    parent) is no longer the model the paper scored, whatever its config names.
    """
    from cdsbias.hub import hub_model_id
    from cdsbias.runs.folder import RUN_INFO_FILE, TRAINER_STATE_FILE

    path = Path(name_or_path)
    if path.exists():
        markers = (path / TRAINER_STATE_FILE, path / RUN_INFO_FILE, path.parent / RUN_INFO_FILE)
        if any(marker.is_file() for marker in markers):
            return None
    return hub_model_id(name_or_path)
