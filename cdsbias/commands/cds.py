"""``cdsbias cds``: write a counterfactual (CDS or CDA) version of a GAP file."""

from __future__ import annotations

import argparse
from pathlib import Path

from cdsbias.cds.corpus import DEFAULT_PROBABILITY


def register(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``cds`` command."""
    parser = subparsers.add_parser(
        "cds",
        help="counterfactual data substitution of a GAP file",
        description="Swap gendered words, pronouns and given names in a GAP TSV and re-derive "
        "the Pronoun/A/B offsets, so the output is a valid GAP file. Writes OUTPUT and a JSON "
        "report (OUTPUT.report.json unless --report is given).",
    )
    parser.add_argument("input", type=Path, metavar="INPUT.tsv", help="GAP TSV file")
    parser.add_argument(
        "--out", type=Path, required=True, metavar="OUTPUT.tsv", help="counterfactual GAP TSV"
    )
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
        default="cds",
        help="cds: replace rows with probability P; cda: keep each row and add its counterfactual",
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
    parser.add_argument("--word-pairs", type=Path, help="custom male<TAB>female word list")
    parser.add_argument("--name-pairs", type=Path, help="custom male<TAB>female name list")
    parser.add_argument("--report", type=Path, help="report path (default OUTPUT.report.json)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Runs ``cdsbias cds``; everything is validated before any output is written."""
    from cdsbias.cds.corpus import validate_settings
    from cdsbias.cds.gap import counterfactual_gap, format_gap, read_gap
    from cdsbias.cds.spacy_analysis import build_substituter
    from cdsbias.cds.wordlists import load_wordlists
    from cdsbias.errors import CdsbiasError
    from cdsbias.io import atomic_write_text

    validate_settings(args.mode, args.probability)
    report_path = args.report or args.out.with_name(args.out.name + ".report.json")
    if args.out.resolve() == args.input.resolve():
        raise CdsbiasError("--out must differ from INPUT")
    wordlists = load_wordlists(args.word_pairs, args.name_pairs, names=args.names)
    table = read_gap(args.input)
    substituter = build_substituter(
        names=args.names,
        analyzer=args.analyzer,
        spacy_model=args.spacy_model,
        wordlists=wordlists,
    )
    output, report = counterfactual_gap(
        table, substituter, mode=args.mode, probability=args.probability, seed=args.seed
    )
    settings = {
        "input": str(args.input),
        "mode": args.mode,
        "probability": args.probability,
        "seed": args.seed,
        "names": args.names,
        "analyzer": substituter.method,
    }
    report_text = report.to_json(settings=settings)
    atomic_write_text(args.out, format_gap(output))
    atomic_write_text(report_path, report_text)
    print(
        f"wrote {len(output.rows)} rows to {args.out} ({report.to_dict()['documents_substituted']}"
        f" substituted, {sum(report.pairs.values())} substitutions, analyser "
        f"{substituter.method}); report: {report_path}"
    )
    return 0
