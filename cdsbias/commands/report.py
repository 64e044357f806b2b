"""``cdsbias report RUN``: bias before/after, what it cost, and where the evidence is."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="summarise a training run: bias before/after, held-out loss, output paths",
    )
    parser.add_argument("run", type=Path, help="a train.py output folder")
    parser.set_defaults(func=run_report)


def run_summary(run: Path) -> dict[str, Any]:
    """Headline numbers of a run (see :func:`cdsbias.runs.points.before_after`)."""
    from cdsbias.runs.points import before_after, read_points

    points = read_points(run)
    if not points:
        raise CdsbiasError(f"{run} has no bias_metrics.jsonl points; is it a train.py output?")
    return before_after(points)


def run_report(args: argparse.Namespace) -> int:
    from cdsbias.benchmarks import format_value
    from cdsbias.runs.folder import CURVE_FILE, METRICS_FILE

    run = args.run
    summary = run_summary(run)
    step0, step1 = summary["first_step"], summary["last_step"]
    rows = [
        (f"{name}: {metric.label}", format_value(before), format_value(after),
         metric.change(before, after))
        for name, entries in summary["benchmarks"].items()
        for metric, before, after in entries
    ]  # fmt: skip
    if "heldout_loss" in summary:
        before, after = summary["heldout_loss"]
        change = summary["heldout_loss_change"]
        verb = "unchanged" if change == 0 else f"{'rose' if change > 0 else 'dropped'} by"
        rows.append(("held-out MLM loss (original text)", f"{before:.4f}", f"{after:.4f}",
                     f"{verb} {abs(change):.1%}" if change else verb))  # fmt: skip
    width = max([len(r[0]) for r in rows] + [10]) + 2
    print(f"{'':{width}}{'step ' + str(step0):>12}{'step ' + str(step1):>12}")
    for label, before_text, after_text, change_text in rows:
        print(f"{label:<{width}}{before_text:>12}{after_text:>12}  {change_text}")
    for line in published_lines(run):
        print(line)
    print(f"bias curve:   {run / CURVE_FILE}")
    print(f"bias metrics: {run / METRICS_FILE}")
    wandb_runs = sorted((run / "wandb").glob("offline-run-*"))
    if wandb_runs:
        print(f"W&B offline run: {wandb_runs[-1]}  (upload: wandb sync {wandb_runs[-1]})")
    cards = sorted((run / "publish").glob("*/README.md"))
    if cards:
        print(f"model card:   {cards[-1]}")
    return 0


def published_lines(run: Path) -> list[str]:
    """Published values for the run's base model beside its step-0 scores.

    Step 0 is the hub model the run started from (``run_info.json``'s ``base_model``),
    scored before training: the model papers report on. Nothing for runs from scratch or
    without a step-0 point.
    """
    from cdsbias.benchmarks import build_benchmark, normalize_specs, split_key
    from cdsbias.runs.folder import RunFolder

    folder = RunFolder(run)
    try:
        info = folder.run_info()
        recipe = folder.recipe()
    except CdsbiasError:
        return []
    base = info.get("base_model")
    points = folder.points()
    if not base or not points or points[0]["step"] != 0:
        return []
    first = points[0]
    try:
        specs = normalize_specs(recipe.get("bias_benchmarks") or [])
    except CdsbiasError:
        specs = {}
    lines = []
    for name, entry in first.get("benchmarks", {}).items():
        # A data file of the recipe is the user's own data: not the paper's rows.
        data_file = specs.get(split_key(name)[0], {}).get("data_file")  # NAME[axis]: NAME's
        try:
            benchmark = build_benchmark(name, {**entry.get("options", {}), "data_file": data_file})
        except CdsbiasError:  # options of another cdsbias version: nothing to compare
            continue
        for line in benchmark.published_notes(base, entry.get("metrics", {})):
            lines.append(f"step 0 ({base}), {name} {line}")
    return lines
