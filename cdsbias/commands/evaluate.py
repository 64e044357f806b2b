"""``cdsbias evaluate`` and ``cdsbias benchmarks``: score a model on registered benchmarks."""

from __future__ import annotations

import argparse
import inspect
import sys
import warnings
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score a masked LM on bias benchmarks",
        description="Score a masked LM (hub id or local folder) on one or more bias "
        "benchmarks; writes OUT/<benchmark>/rows.tsv and summary.json.",
    )
    parser.add_argument("model", help="hub model id (e.g. bert-base-uncased) or local folder")
    parser.add_argument(
        "--benchmark", "-b", default="becpro",
        help="benchmark name(s), comma-separated (see `cdsbias benchmarks`); default becpro",
    )  # fmt: skip
    parser.add_argument("--out", "-o", required=True, type=Path, help="output folder")
    parser.add_argument("--data", type=Path, help="data file to use instead of the default")
    parser.add_argument(
        "--data-dir", type=Path,
        help="folder laid out like shared/data holding every benchmark's files",
    )  # fmt: skip
    parser.add_argument(
        "--language", help="data language, e.g. en or de (default: each benchmark's own)"
    )
    parser.add_argument("--batch-size", type=int, default=64, help="sequences per forward pass")
    parser.add_argument("--device", help="torch device (default: cuda, mps or cpu)")
    parser.add_argument(
        "--compat", choices=["bartl2020"],
        help="BEC-Pro: reproduce the authors' original evaluation code exactly",
    )  # fmt: skip
    parser.add_argument(
        "--mask-per", choices=["word", "piece"],
        help="BEC-Pro: mask the profession with one [MASK] per word (default) or word piece",
    )  # fmt: skip
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE",
        help="extra benchmark option, repeatable (e.g. --option n_resamples=2000)",
    )  # fmt: skip
    parser.add_argument("--revision", help="hub revision of the model")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or table")
    parser.set_defaults(func=run_evaluate)

    listing = subparsers.add_parser("benchmarks", help="list the registered benchmarks")
    listing.set_defaults(func=run_list)


def run_list(_args: argparse.Namespace) -> int:
    from cdsbias.benchmarks import get_benchmark, list_benchmarks

    for name, description in list_benchmarks().items():
        languages = ", ".join(get_benchmark(name).languages)
        print(f"{name:<14} [{languages}] {description}")
    return 0


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def build_benchmarks(names: list[str], args: argparse.Namespace) -> list[Any]:
    """Instantiates each named benchmark with the options that were given for it."""
    from cdsbias.benchmarks import get_benchmark

    options: dict[str, Any] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CdsbiasError(f"--option expects KEY=VALUE, got {item!r}.")
        options[key.strip().replace("-", "_")] = _parse_value(value.strip())
    for flag in ("compat", "mask_per"):
        if getattr(args, flag, None) is not None:
            options[flag] = getattr(args, flag)
    if args.data is not None and len(names) > 1:
        raise CdsbiasError("--data names one file, so it takes one --benchmark; use --data-dir.")
    benchmarks = []
    for name in names:
        cls = get_benchmark(name)
        accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
        for key in options:
            if key not in accepted:
                flag = "--" + key.replace("_", "-")
                raise CdsbiasError(f"Benchmark '{name}' has no option {flag}.")
        benchmarks.append(
            cls(data_file=args.data, data_dir=args.data_dir, language=args.language, **options)
        )
    return benchmarks


def _one_line_warnings() -> None:
    def show(message, category, filename, lineno, file=None, line=None):
        print(f"warning: {message}", file=sys.stderr)

    warnings.showwarning = show


def run_evaluate(args: argparse.Namespace) -> int:
    from cdsbias.benchmarks import BenchmarkResult, write_result

    _one_line_warnings()
    names = [n.strip() for n in args.benchmark.split(",") if n.strip()]
    if not names:
        raise CdsbiasError("--benchmark names no benchmark.")
    if args.batch_size < 1:
        raise CdsbiasError(f"--batch-size must be at least 1, got {args.batch_size}.")
    if args.out.exists() and not args.out.is_dir():
        raise CdsbiasError(f"--out {args.out} exists and is not a folder.")
    benchmarks = build_benchmarks(names, args)
    # Read every data set before the (slow) model load, so bad data fails fast.
    data = [benchmark.load() for benchmark in benchmarks]

    from cdsbias.scoring import MaskedLMScorer

    scorer = MaskedLMScorer.from_pretrained(
        args.model,
        device=args.device,
        batch_size=args.batch_size,
        revision=args.revision,
        progress=not args.quiet,
    )
    for benchmark, rows in zip(benchmarks, data):
        scored = benchmark.score(scorer, rows)
        summary, metrics = benchmark.summarize(scored)
        summary["model"] = args.model
        result = BenchmarkResult(
            benchmark.name, scored, summary, metrics, benchmark.format_report(summary)
        )
        folder = write_result(result, args.out)
        if not args.quiet:
            print(result.report)
        print(f"wrote {folder / 'rows.tsv'} and {folder / 'summary.json'}")
    return 0
