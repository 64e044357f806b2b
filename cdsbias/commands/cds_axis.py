"""``cdsbias cds --axis AXIS``: n-ary CDA/CDS of a corpus for an axis other than gender.

Writes one row per rendering (the original and its counterfactuals under ``cda``; the
counterfactuals alone under ``cds``) with the text and ``groups``, the group mapping
applied, and a JSON report: substitutions per group and pair, axis words left alone (not
about people, part of a name) and words that look like axis words but are in no tuple.
Every input is checked before anything is written.
"""

from __future__ import annotations

import argparse
import json

from cdsbias.errors import CdsbiasError

#: Gender-only flags and their defaults: refused with an axis other than gender.
GENDER_FLAGS = {
    "word_pairs": None,
    "name_pairs": None,
    "forms": "binary",
    "neutral_pronouns": "they",
    "neutral_reflexive": "themself",
    "neutral_nouns": False,
    "neutral_kinship": False,
    "neutral_names": False,
}


def check_axis_arguments(args: argparse.Namespace) -> None:
    """Raises a one-line error for a bad axis, language, flag or input kind."""
    from cdsbias.axes import get_axis
    from cdsbias.cds.axis_corpus import validate_axis_settings
    from cdsbias.cds.languages import language_class

    axis = get_axis(args.axis)  # unknown name (did-you-mean) or a bad file
    from cdsbias.methods import check_counterfactuals

    check_counterfactuals(axis)  # an axis without counterfactuals: what applies instead
    axis.check_language(args.language, language_class(args.language).axes)
    given = [
        "--" + name.replace("_", "-")
        for name, default in GENDER_FLAGS.items()
        if getattr(args, name) != default
    ]
    if given:
        raise CdsbiasError(
            f"{', '.join(given)} shape gender CDS; --axis is '{axis.name}'. Drop "
            f"{'it' if len(given) == 1 else 'them'} or use --axis gender."
        )
    args.mode = args.mode or "cda"
    args.counterfactuals = args.counterfactuals or "one"
    validate_axis_settings(args.mode, args.probability, args.counterfactuals)
    inputs = args.input
    if len(inputs) == 1 and inputs[0].suffix.lower() == ".tsv" and not args.dataset:
        raise CdsbiasError(
            f"{inputs[0]}: a GAP .tsv file is gender data (its offsets mark pronouns); "
            f"--axis {axis.name} substitutes corpora (.txt, .jsonl, .csv, .parquet)"
        )
    args.bias_axis = axis


def run_axis(args: argparse.Namespace) -> int:
    """Runs ``cdsbias cds --axis AXIS`` on a corpus."""
    from cdsbias.cds.axis_corpus import AxisCounterfactualMapper, AxisReport
    from cdsbias.cds.corpus import REPORT_COLUMN
    from cdsbias.cds.corpus_io import write_corpus
    from cdsbias.commands.corpus_args import check_corpus_arguments, open_corpus, progress_bars
    from cdsbias.io import atomic_write_text

    check_axis_arguments(args)
    axis = args.bias_axis
    report_path = check_corpus_arguments(args)
    text_column = args.text_column or "text"
    with progress_bars(args.quiet):
        corpus, id_column = open_corpus(args, text_column)
        mapper = AxisCounterfactualMapper(
            text_column,
            axis=axis,
            mode=args.mode,
            probability=args.probability,
            seed=args.seed,
            id_column=id_column,
            counterfactuals=args.counterfactuals,
            language=args.language,
            report=True,
        )
        mapped = corpus.map(
            mapper,
            batched=True,
            num_proc=args.num_proc if args.num_proc > 1 else None,
            desc=f"{axis.name} counterfactuals ({args.mode}, {args.counterfactuals})",
        )
        report = AxisReport(axis)
        for batch in mapped.select_columns([REPORT_COLUMN]).iter(batch_size=10_000):
            for record in batch[REPORT_COLUMN]:
                report.add(record)
        output = mapped.remove_columns([REPORT_COLUMN])
        settings = {
            "input": [str(path) for path in args.input] if args.input else None,
            "dataset": args.dataset,
            "text_column": text_column,
            "id_column": id_column,
            "axis": args.axis,
            "mode": args.mode,
            "counterfactuals": args.counterfactuals,
            "probability": args.probability,
            "seed": args.seed,
            "language": args.language,
        }
        write_corpus(output, args.out)
        text = json.dumps({"settings": settings, **report.to_dict()}, indent=2) + "\n"
        atomic_write_text(report_path, text)
    print(
        f"wrote {len(output)} rows to {args.out} ({report.documents_substituted} of "
        f"{report.documents} documents with {axis.name} words, {report.counterfactuals} "
        f"counterfactuals, {sum(report.pairs.values())} substitutions); report: {report_path}"
    )
    print(report.summary())
    return 0
