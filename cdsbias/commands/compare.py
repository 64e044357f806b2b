"""``cdsbias compare RUN [RUN ...]``: one table and a trade-off plot across training runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare training runs: method, cost, bias before/after, held-out loss",
        description="Reads train.py output folders and prints one markdown table: per run the "
        "method, trainable parameters, wall time, each headline metric before -> after and "
        "its change, and the held-out MLM loss. With --out it also writes comparison.md, "
        "comparison.csv and tradeoff.png (bias reduction vs held-out loss increase).",
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="train.py output folders")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write comparison.md, comparison.csv, tradeoff.png here",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the three files in DIR if an earlier comparison wrote them "
        "(default: refuse, keeping them)",
    )
    parser.add_argument(
        "--metric",
        metavar="NAME/KEY",
        help="headline metric to plot, as BENCHMARK/METRIC_KEY (default: the first benchmark's "
        "first headline metric); the table lists every one",
    )
    parser.add_argument(
        "--format",
        choices=("markdown", "csv"),
        default="markdown",
        help="what to print: the markdown table with its notes (default; what docs/methods.md "
        "shows) or the CSV (one row per run, raw numbers)",
    )
    parser.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    from cdsbias.io import check_output
    from cdsbias.runs.compare import CSV_FILE, MARKDOWN_FILE, PLOT_FILE, compare, csv_text
    from cdsbias.runs.summaries import read_runs

    if args.out is not None:
        check_output(args.out, flag="--out", folder=True, overwrite=True)
        for name in (MARKDOWN_FILE, CSV_FILE, PLOT_FILE):
            check_output(args.out / name, flag="--out", folder=False, overwrite=args.overwrite)
    table = compare(args.runs, out=args.out, metric=args.metric)
    print(table if args.format == "markdown" else csv_text(read_runs(args.runs)), end="")
    if args.out is not None:
        for name in (MARKDOWN_FILE, CSV_FILE, PLOT_FILE):
            print(f"wrote {args.out / name}")
    return 0
