"""``cdsbias publish``: model card + upload of a debiased checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="write a model card with bias before/after and upload a checkpoint",
        description="Builds the folder to upload (model or adapter, tokenizer, README.md "
        "model card, bias curve), checks that it loads as trained, and uploads it with "
        "huggingface_hub. A run whose method saved an adapter gives the adapter alone, "
        "naming its base by hub id.",
    )
    parser.add_argument("checkpoint", type=Path, help="checkpoint-N folder or run output folder")
    parser.add_argument("--repo-id", required=True, help="hub repository, ORG/NAME")
    parser.add_argument("--private", action="store_true", help="create a private repository")
    parser.add_argument(
        "--dry-run", action="store_true", help="build the exact folder, upload nothing"
    )
    parser.add_argument(
        "--merge", action="store_true",
        help="runs with a mergeable adapter: merge it into its base and upload full weights",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path,
        help="where to build the folder (default: RUN/publish/NAME, rebuilt each time)",
    )  # fmt: skip
    parser.add_argument(
        "--overwrite", action="store_true",
        help="replace an --out folder that holds files (default: refuse, keeping them)",
    )  # fmt: skip
    parser.set_defaults(func=run_publish)


def run_publish(args: argparse.Namespace) -> int:
    from cdsbias.io import check_output
    from cdsbias.runs.folder import RunFolder
    from cdsbias.runs.publish import build_folder, upload

    checkpoint = args.checkpoint.resolve()
    if not checkpoint.is_dir():
        from cdsbias.errors import CdsbiasError

        raise CdsbiasError(f"{args.checkpoint} does not exist or is not a folder.")
    if args.out is not None:  # the default folder is the run's own, rebuilt from it
        check_output(args.out, flag="--out", folder=True, overwrite=args.overwrite)
    out = args.out or RunFolder.of(checkpoint).path / "publish" / args.repo_id.split("/")[-1]
    folder = build_folder(checkpoint, args.repo_id, out, merge=args.merge)
    print(f"model card: {folder / 'README.md'}")
    if args.dry_run:
        print(f"dry run: the folder that would be uploaded to {args.repo_id} is {folder}")
        return 0
    url = upload(folder, args.repo_id, private=args.private)
    print(f"uploaded to {url}")
    return 0
