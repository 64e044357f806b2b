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
    """Headline numbers of a run: first vs last evaluated point."""
    from cdsbias.train.callback import read_points

    points = read_points(run)
    if not points:
        raise CdsbiasError(f"{run} has no bias_metrics.jsonl points; is it a train.py output?")
    first, last = points[0], points[-1]
    summary: dict[str, Any] = {"first_step": first["step"], "last_step": last["step"]}
    metrics0 = first.get("benchmarks", {}).get("becpro", {}).get("metrics", {})
    metrics1 = last.get("benchmarks", {}).get("becpro", {}).get("metrics", {})
    if "mean_abs_gap" in metrics0 and "mean_abs_gap" in metrics1:
        summary["mean_abs_gap"] = (metrics0["mean_abs_gap"], metrics1["mean_abs_gap"])
        if metrics0["mean_abs_gap"]:
            summary["gap_reduction"] = 1 - metrics1["mean_abs_gap"] / metrics0["mean_abs_gap"]
        for key in ("gap_male", "gap_female", "gap_balanced", "profession_test_p"):
            summary[key] = (metrics0.get(key), metrics1.get(key))
    if "heldout_loss" in first and "heldout_loss" in last:
        summary["heldout_loss"] = (first["heldout_loss"], last["heldout_loss"])
        summary["heldout_loss_change"] = last["heldout_loss"] / first["heldout_loss"] - 1
    return summary


def run_report(args: argparse.Namespace) -> int:
    from cdsbias.train.callback import CURVE_FILE, METRICS_FILE

    run = args.run
    summary = run_summary(run)
    step0, step1 = summary["first_step"], summary["last_step"]
    print(f"{'':34}{'step ' + str(step0):>12}{'step ' + str(step1):>12}")
    labels = {
        "gap_male": "BEC-Pro gap, male professions",
        "gap_female": "BEC-Pro gap, female professions",
        "gap_balanced": "BEC-Pro gap, balanced professions",
        "mean_abs_gap": "mean |gap| (male + female prof.)",
        "profession_test_p": "profession-level permutation p",
        "heldout_loss": "held-out MLM loss (original text)",
    }
    for key, label in labels.items():
        if key in summary and None not in summary[key]:
            before, after = summary[key]
            print(f"{label:<34}{before:>12.4g}{after:>12.4g}")
    if "gap_reduction" in summary:
        print(f"mean |gap| dropped by {summary['gap_reduction']:.1%}")
    if "heldout_loss_change" in summary:
        print(f"held-out MLM loss changed by {summary['heldout_loss_change']:+.1%}")
    print(f"bias curve:   {run / CURVE_FILE}")
    print(f"bias metrics: {run / METRICS_FILE}")
    wandb_runs = sorted((run / "wandb").glob("offline-run-*"))
    if wandb_runs:
        print(f"W&B offline run: {wandb_runs[-1]}  (upload: wandb sync {wandb_runs[-1]})")
    cards = sorted((run / "publish").glob("*/README.md"))
    if cards:
        print(f"model card:   {cards[-1]}")
    return 0
