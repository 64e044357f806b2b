"""``cdsbias cds``: write a counterfactual (CDS or CDA) version of a GAP file or a corpus."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdsbias.cds.corpus import DEFAULT_PROBABILITY

if TYPE_CHECKING:
    from cdsbias.cds.forms import GenderForms


def register(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``cds`` command."""
    parser = subparsers.add_parser(
        "cds",
        help="counterfactual data substitution of a GAP file or a corpus",
        description="Swap gendered words, pronouns and given names. A GAP .tsv gives a valid "
        "GAP file (Pronoun/A/B offsets re-derived). Corpora: .txt (one document per line), "
        ".jsonl/.json, .csv or .parquet files (globs and several files of one kind), or "
        "--dataset ID (hub id or local dataset folder); the --text-column is substituted "
        "with the training path's engine and seeding, a boolean 'counterfactual' column "
        "is added, and OUTPUT is .jsonl, .parquet or a save_to_disk folder. Writes OUTPUT "
        "and a JSON report (OUTPUT.report.json unless --report is given).",
    )
    parser.add_argument(
        "input",
        type=Path,
        nargs="*",
        metavar="INPUT",
        help="GAP .tsv file, or corpus files/globs (.txt, .jsonl, .json, .csv, .parquet)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="OUTPUT",
        help="GAP: counterfactual .tsv; corpus: .jsonl, .parquet or a folder (save_to_disk)",
    )
    parser.add_argument(
        "--dataset",
        metavar="ID",
        help="instead of INPUT: a hub dataset id or a local dataset folder (load_dataset)",
    )
    parser.add_argument("--dataset-config", metavar="NAME", help="the dataset's configuration")
    parser.add_argument("--split", metavar="S", help="the dataset's split (default train)")
    parser.add_argument(
        "--text-column",
        metavar="NAME",
        help="corpus column to substitute (default text)",
    )
    parser.add_argument(
        "--id-column",
        metavar="NAME",
        help="corpus column whose values key each document's coin and name it in the report "
        "(default: 'id' if the corpus has it, as in training; else a hash of the text)",
    )
    parser.add_argument(
        "--num-proc", type=int, default=1, metavar="N", help="corpus: processes (default 1)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument(
        "--probability",
        type=float,
        default=DEFAULT_PROBABILITY,
        metavar="P",
        help=f"CDS: probability that a row is substituted (default {DEFAULT_PROBABILITY}, as "
        "Hall Maudslay et al. 2019 and the recipes' cds_probability; 1.0 swaps every row, "
        "the GAP setup of Bartl et al. 2020)",
    )
    parser.add_argument(
        "--names",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="swap given names (default: yes)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the per-row coins")
    parser.add_argument(
        "--mode",
        choices=("cds", "cda"),
        default=None,
        help="cds: replace rows with probability P; cda: keep each row and add its "
        "counterfactual (default: cds for gender, cda, as bias-bench, for other axes)",
    )
    parser.add_argument(
        "--axis",
        default="gender",
        metavar="AXIS",
        help="the bias axis whose words are substituted: gender (default; today's engines), "
        "race, religion, age, or an attribute file (FILE.tsv, FILE.json[#key]); the other "
        "registered axes have no counterfactuals (docs/axes.md, Methods per axis)",
    )
    parser.add_argument(
        "--counterfactuals",
        choices=("one", "all"),
        default=None,
        help="axes other than gender: one (default: each group to a drawn other group, "
        "bias-bench's CDA) or all (the k-1 cyclic shifts of the groups, deterministic)",
    )
    parser.add_argument(
        "--analyzer",
        choices=("rules", "spacy", "auto"),
        default="auto",
        help="her/his and name decisions: spaCy if installed (auto), or the rule-based fallback",
    )
    parser.add_argument(
        "--spacy-model",
        default="en_core_web_sm",
        help="spaCy model package or folder (default en_core_web_sm)",
    )
    parser.add_argument(
        "--language",
        default="en",
        metavar="CODE",
        help="language of the text, whose rules swap it: en (default), da, ... (the recipe "
        "key cds_language)",
    )
    add_forms_arguments(parser)
    parser.add_argument("--word-pairs", type=Path, help="custom male<TAB>female word list")
    parser.add_argument("--name-pairs", type=Path, help="custom male<TAB>female name list")
    parser.add_argument("--report", type=Path, help="report path (default OUTPUT.report.json)")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUTPUT and its report if they exist (default: refuse, keeping them)",
    )
    parser.set_defaults(func=run)


def add_forms_arguments(parser: argparse.ArgumentParser) -> None:
    """The gender-form flags (cdsbias.cds.forms; the recipe keys gender_forms, neutral_*)."""
    parser.add_argument(
        "--forms",
        default="binary",
        metavar="FORMS",
        help="binary (default: swap he<->she), neutral (he/she -> they or a neopronoun) or "
        "binary+neutral (each document one or the other; both with --mode cda)",
    )
    parser.add_argument(
        "--neutral-pronouns",
        default="they",
        metavar="FAMILY",
        help="neutral pronoun family: they (default), xe, ze or ey",
    )
    parser.add_argument(
        "--neutral-reflexive",
        default="themself",
        metavar="FORM",
        help="reflexive of singular they: themself (default) or themselves",
    )
    for flag, text in (
        ("nouns", "also rewrite gendered person nouns (chairman -> chair)"),
        ("kinship", "with --neutral-nouns, also kinship terms (mother -> parent)"),
        ("names", "replace given names by unisex names"),
    ):
        parser.add_argument(
            f"--neutral-{flag}", action=argparse.BooleanOptionalAction, default=False, help=text
        )


def gender_forms(args: argparse.Namespace) -> GenderForms | None:
    """The validated gender-form settings of the command line; None for binary."""
    from cdsbias.cds.forms import GenderForms

    forms = GenderForms(
        forms=args.forms,
        pronouns=args.neutral_pronouns,
        reflexive=args.neutral_reflexive,
        nouns=args.neutral_nouns,
        kinship=args.neutral_kinship,
        names=args.neutral_names,
    )
    forms.validate(args.language, prefix="--")
    return forms if forms.neutral else None


def run(args: argparse.Namespace) -> int:
    """Runs ``cdsbias cds`` on a GAP file or a corpus (by the input's kind)."""
    from cdsbias.cds.axis_corpus import is_gender
    from cdsbias.cds.languages import language_class
    from cdsbias.errors import CdsbiasError

    language_class(args.language)  # an unknown code: did-you-mean, before anything is read
    if not is_gender(args.axis):
        from cdsbias.commands.cds_axis import run_axis

        return run_axis(args)
    if args.counterfactuals is not None:
        raise CdsbiasError(
            "--counterfactuals applies to axes of more than two groups (--axis race, religion "
            "or a file); gender's counterfactual is its one swap. Drop it."
        )
    args.mode = args.mode or "cds"
    args.gender_forms = gender_forms(args)
    if args.forms == "neutral" and (args.word_pairs or args.name_pairs):
        raise CdsbiasError(
            "--word-pairs and --name-pairs replace the binary swap's lists, which --forms "
            "neutral does not use; drop them or use --forms binary+neutral"
        )
    if args.language != "en" and (args.word_pairs or args.name_pairs):
        raise CdsbiasError(
            "--word-pairs and --name-pairs replace the English lists; drop them with "
            f"--language {args.language}"
        )
    inputs = args.input
    if len(inputs) == 1 and inputs[0].suffix.lower() == ".tsv" and not args.dataset:
        for flag, value in (("--text-column", args.text_column), ("--id-column", args.id_column)):
            if value is not None:
                raise CdsbiasError(f"{flag} applies to corpora, not GAP .tsv files; drop it")
        args.input = inputs[0]
        return run_gap(args)
    return run_corpus(args)


def run_gap(args: argparse.Namespace) -> int:
    """Runs ``cdsbias cds`` on a GAP file; everything is validated before any output is written."""
    from cdsbias.cds.corpus import validate_settings
    from cdsbias.cds.gap import counterfactual_gap, format_gap, read_gap
    from cdsbias.cds.languages import check_language
    from cdsbias.cds.spacy_analysis import build_substituter
    from cdsbias.cds.wordlists import load_wordlists
    from cdsbias.errors import CdsbiasError
    from cdsbias.io import atomic_write_text, check_output

    validate_settings(args.mode, args.probability)
    report_path = args.report or args.out.with_name(args.out.name + ".report.json")
    if args.out.resolve() == args.input.resolve():
        raise CdsbiasError("--out must differ from INPUT")
    check_output(args.out, flag="--out", folder=False, overwrite=args.overwrite)
    check_output(report_path, flag="--report", folder=False, overwrite=args.overwrite)
    wordlists = (
        load_wordlists(args.word_pairs, args.name_pairs, names=args.names)
        if args.language == "en"
        else None
    )
    table = read_gap(args.input)
    substituter = build_substituter(
        names=args.names,
        analyzer=args.analyzer,
        spacy_model=args.spacy_model,
        language=args.language,
        gender_forms=args.gender_forms,
        seed=args.seed,
        **({"wordlists": wordlists} if args.language == "en" else {}),
    )
    check_language((row["Text"] for row in table.rows), args.language, option="--language")
    output, report = counterfactual_gap(
        table, substituter, mode=args.mode, probability=args.probability, seed=args.seed
    )
    settings = {
        "input": str(args.input),
        "mode": args.mode,
        "probability": args.probability,
        "seed": args.seed,
        "names": args.names,
        "language": args.language,
        "analyzer": substituter.method,
        **_forms_settings(args),
    }
    report_text = report.to_json(settings=settings)
    atomic_write_text(args.out, format_gap(output))
    atomic_write_text(report_path, report_text)
    print(
        f"wrote {len(output.rows)} rows to {args.out} ({report.to_dict()['documents_substituted']}"
        f" substituted, {sum(report.pairs.values())} substitutions, analyser "
        f"{substituter.method}); report: {report_path}"
    )
    print(report.summary(substituter))
    return 0


def run_corpus(args: argparse.Namespace) -> int:
    """Runs ``cdsbias cds`` on a corpus with the training path's ``CounterfactualMapper``.

    Everything that can be checked (settings, output kind, inputs, columns, word lists,
    analyser) is checked before the map; the output and report are written only after it.
    """
    from cdsbias.cds.corpus import REPORT_COLUMN, CounterfactualMapper, validate_settings
    from cdsbias.cds.corpus_io import collect_report, write_corpus
    from cdsbias.cds.wordlists import load_wordlists
    from cdsbias.commands.corpus_args import check_corpus_arguments, open_corpus, progress_bars
    from cdsbias.io import atomic_write_text

    validate_settings(args.mode, args.probability)
    report_path = check_corpus_arguments(args)
    text_column = args.text_column or "text"
    custom_lists = args.word_pairs is not None or args.name_pairs is not None
    wordlists = (
        load_wordlists(args.word_pairs, args.name_pairs, names=args.names) if custom_lists else None
    )

    with progress_bars(args.quiet):
        corpus, id_column = open_corpus(args, text_column)
        mapper = CounterfactualMapper(
            text_column,
            mode=args.mode,
            probability=args.probability,
            seed=args.seed,
            names=args.names,
            id_column=id_column,
            analyzer=args.analyzer,
            spacy_model=args.spacy_model,
            wordlists=wordlists,
            report=True,
            language=args.language,
            language_option="--language",
            gender_forms=args.gender_forms,
        )
        method = mapper.substituter.method  # a missing spaCy model fails here, not in a worker
        mapped = corpus.map(
            mapper,
            batched=True,
            num_proc=args.num_proc if args.num_proc > 1 else None,
            desc=f"counterfactual substitution ({args.mode})",
        )
        report = collect_report(mapped, id_column)
        output = mapped.remove_columns([REPORT_COLUMN])
        settings = {
            "input": [str(path) for path in args.input] if args.input else None,
            "dataset": args.dataset,
            "dataset_config": args.dataset_config,
            "split": (args.split or "train") if args.dataset else None,
            "text_column": text_column,
            "id_column": id_column,
            "mode": args.mode,
            "probability": args.probability,
            "seed": args.seed,
            "names": args.names,
            "language": args.language,
            "analyzer": method,
            **_forms_settings(args),
        }
        write_corpus(output, args.out)
        atomic_write_text(report_path, report.to_json(settings=settings))
    summary = report.to_dict(top_unlisted=0)
    print(
        f"wrote {len(output)} rows to {args.out} ({summary['documents_substituted']} of "
        f"{summary['documents_total']} documents substituted, {summary['substitutions_total']} "
        f"substitutions, analyser {method}); report: {report_path}"
    )
    print(report.summary(mapper.substituter))
    return 0


def _forms_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The report's gender-form settings; none for binary, so its report is as before."""
    return {"gender_forms": args.gender_forms.to_dict()} if args.gender_forms else {}
