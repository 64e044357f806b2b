"""``cdsbias study run|status|table``: a grid of runs from one spec (docs/studies.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "study",
        help="run a study (models x methods x axes x seeds) and table it",
        description="A study runs every cell of a spec's grid as an ordinary train.py run "
        "(STUDY/runs/<model>/<method>/<axis>/seed-<k>/), resumes where it stopped, and "
        "tables the results with seed and test-example uncertainty. See docs/studies.md.",
    )
    commands = parser.add_subparsers(dest="study_command", metavar="SUBCOMMAND", required=True)

    run = commands.add_parser("run", help="run the spec's unfinished and failed cells")
    run.add_argument("spec", type=Path, metavar="SPEC", help="the study's YAML spec")
    run.add_argument(
        "overrides",
        nargs="*",
        metavar="KEY=VALUE",
        help="recipe keys for every cell, after the spec's overrides (right after SPEC)",
    )
    run.add_argument(
        "--out", type=Path, metavar="STUDY", help="the study folder (default: runs/studies/<name>)"
    )
    run.add_argument(
        "--executor",
        choices=("local", "slurm"),
        default="local",
        help="local: cells on this machine; slurm: a submitit job array",
    )
    run.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="cells at once (local); the cores are split between them unless "
        "OMP_NUM_THREADS is set",
    )
    run.add_argument(
        "--model",
        action="append",
        metavar="[LABEL=]MODEL",
        help="replace the spec's models (repeat for several)",
    )
    run.add_argument(
        "--set",
        action="append",
        dest="study_keys",
        metavar="KEY=VALUE",
        help="replace a study key of the spec, e.g. --set seeds=1 --set 'axes=[race]'",
    )
    run.add_argument(
        "--rerun-changed",
        action="store_true",
        help="rerun finished cells whose keys changed (their folders are "
        "replaced) instead of refusing",
    )
    run.add_argument("--table", action="store_true", help="write the table when the run ends")
    run.set_defaults(func=run_study)

    status = commands.add_parser("status", help="each cell: done, running, failed or pending")
    status.add_argument("study", type=Path, metavar="STUDY", help="the study folder")
    status.set_defaults(func=study_status)

    table = commands.add_parser("table", help="write table.md/.csv/.json and the plots")
    table.add_argument("study", type=Path, metavar="STUDY", help="the study folder")
    table.set_defaults(func=study_table)


def _models(values: list[str] | None) -> Any:
    if not values:
        return None
    if all("=" in v for v in values):
        return dict(v.split("=", 1) for v in values)
    return list(values)


def run_study(args: argparse.Namespace) -> int:
    from cdsbias.studies.runner import default_folder, run_study
    from cdsbias.studies.spec import load_spec

    spec = load_spec(
        args.spec, args.overrides, models=_models(args.model), study_keys=args.study_keys
    )
    out = args.out or default_folder(spec)
    counts = run_study(
        spec, out, executor=args.executor, jobs=args.jobs, rerun_changed=args.rerun_changed
    )
    if args.table:
        _write_table(out)
    return 0 if counts.get("failed", 0) == 0 else 1


def study_status(args: argparse.Namespace) -> int:
    from cdsbias.studies.table import load_study

    folder, _spec, cells = load_study(args.study)
    counts: dict[str, int] = {}
    for cell in cells:
        status = folder.status(cell)
        counts[status.status] = counts.get(status.status, 0) + 1
        line = f"{status.status:<8} {cell.id}"
        if status.note:
            line += f"  {status.note}"
        print(line)
    print(
        ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f" of {len(cells)} cells",
        file=sys.stderr,
    )
    return 0


def _write_table(study: Path) -> None:
    from cdsbias.studies.outputs import FILES, log_wandb, write_table
    from cdsbias.studies.table import study_table as read_table

    spec, rows, columns = read_table(study)
    out = write_table(spec, rows, columns, study)
    print((out / "table.md").read_text(encoding="utf-8"), end="")
    for name in FILES:
        print(f"wrote {out / name}", file=sys.stderr)
    if spec.wandb:
        mode = log_wandb(spec, rows, columns, study)
        print(
            f"logged the table to W&B (group {spec.name}, mode {mode or 'online'})", file=sys.stderr
        )


def study_table(args: argparse.Namespace) -> int:
    _write_table(args.study)
    return 0
