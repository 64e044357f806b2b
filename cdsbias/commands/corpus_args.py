"""What ``cdsbias cds`` does alike on a corpus for gender and for any other axis: check the
inputs and outputs before anything is written, quiet the progress bars, open the corpus."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError


def check_corpus_arguments(args: argparse.Namespace) -> Path:
    """Checks ``--num-proc``, INPUT vs ``--dataset``, the output format, that neither
    output is an input, and that neither holds earlier results (unless ``--overwrite``);
    returns the report's path.

    Raises:
        CdsbiasError: One line naming the flag and the fix.
    """
    from cdsbias.cds.corpus_io import expand_inputs, output_format
    from cdsbias.io import check_output

    if args.num_proc < 1:
        raise CdsbiasError(f"--num-proc must be at least 1, got {args.num_proc}")
    kind = output_format(args.out)
    report_path = args.report or args.out.with_name(args.out.name + ".report.json")
    if args.input and args.dataset:
        raise CdsbiasError("give either INPUT files or --dataset ID, not both")
    if not args.input and not args.dataset:
        raise CdsbiasError("no input: give INPUT files or --dataset ID")
    sources = expand_inputs(args.input)[1] if args.input else [Path(args.dataset)]
    if {args.out.resolve(), report_path.resolve()} & {source.resolve() for source in sources}:
        raise CdsbiasError("--out and --report must differ from the input")
    overwrite = getattr(args, "overwrite", False)
    check_output(args.out, flag="--out", folder=kind == "folder", overwrite=overwrite)
    check_output(report_path, flag="--report", folder=False, overwrite=overwrite)
    return report_path


@contextlib.contextmanager
def progress_bars(quiet: bool) -> Iterator[None]:
    """``datasets``' progress bars off while ``quiet``, restored afterwards."""
    import datasets

    bars_were_on = datasets.is_progress_bar_enabled()
    if quiet:
        datasets.disable_progress_bars()
    try:
        yield
    finally:
        if quiet and bars_were_on:
            datasets.enable_progress_bars()


def open_corpus(args: argparse.Namespace, text_column: str) -> tuple[Any, str | None]:
    """The corpus of INPUT or ``--dataset`` and the column that keys its documents."""
    from cdsbias.cds.corpus_io import document_key_column, load_corpus

    corpus = load_corpus(
        args.input,
        dataset=args.dataset,
        config=args.dataset_config,
        split=args.split,
        text_column=text_column,
    )
    return corpus, document_key_column(corpus.column_names, args.id_column)
