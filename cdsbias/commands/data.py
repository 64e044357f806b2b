"""``cdsbias data fetch`` and ``cdsbias data list``: get the public datasets, pinned by sha256."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Adds the ``data`` command with its ``fetch`` and ``list`` sub-commands."""
    parser = subparsers.add_parser("data", help="fetch and list the datasets cdsbias uses")
    actions = parser.add_subparsers(dest="data_command", metavar="ACTION")
    parser.set_defaults(func=lambda args: _print_help(parser))

    fetch_parser = actions.add_parser(
        "fetch",
        help="download (or copy with --data-dir) datasets, verified by sha256",
        description="Download datasets from their pinned upstream URLs, or copy them from a "
        "local folder laid out like shared/data, and verify every file's sha256.",
    )
    fetch_parser.add_argument("names", nargs="+", metavar="NAME", help="dataset names or 'all'")
    fetch_parser.add_argument(
        "--data-dir",
        "--from",
        dest="from_dir",
        type=Path,
        help="copy from this data folder (laid out like shared/data) instead of downloading; "
        "--from is the old name",
    )
    fetch_parser.add_argument(
        "--out",
        "--to",
        dest="to_dir",
        type=Path,
        help="data folder to write into (default: $CDSBIAS_DATA_DIR or ~/.cache/cdsbias/data); "
        "--to is the old name",
    )
    fetch_parser.set_defaults(func=_run_fetch)

    list_parser = actions.add_parser("list", help="list the datasets and whether they are cached")
    list_parser.add_argument(
        "--data-dir", "--dir", dest="data_dir", type=Path, help="data folder to inspect"
    )
    list_parser.set_defaults(func=_run_list)


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _run_fetch(args: argparse.Namespace) -> int:
    from cdsbias.data import fetch as fetch_module
    from cdsbias.io import check_output

    names = list(fetch_module.DATASETS) if "all" in args.names else args.names
    for name in names:
        fetch_module.get_spec(name)  # fail on a typo before any download starts
    if args.to_dir is not None:  # a data folder: verified files in it are kept, not results
        check_output(args.to_dir, flag="--out", folder=True, overwrite=True)
    for name in names:
        folder = fetch_module.fetch(name, to_dir=args.to_dir, from_dir=args.from_dir)
        spec = fetch_module.DATASETS[name]
        print(f"{name}: {len(spec.files)} files verified in {folder} (licence: {spec.licence})")
    return 0


def _run_list(args: argparse.Namespace) -> int:
    from cdsbias.data import fetch as fetch_module

    data_dir = args.data_dir or fetch_module.default_data_dir()
    print(f"data folder: {data_dir}")
    for name, spec in fetch_module.DATASETS.items():
        status = "cached" if fetch_module.is_cached(name, data_dir) else "not cached"
        print(f"{name:<12} {status:<10} {spec.licence}")
        print(f"{'':<12} files: {', '.join(spec.file_names())}")
    return 0
