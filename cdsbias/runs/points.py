"""A run's evaluated points (``bias_metrics.jsonl``): before/after and the curve.

Readers of finished runs (``cdsbias report``, ``cdsbias compare``, publishing) use this
module without loading transformers; :mod:`cdsbias.train.callback` writes the points
through :class:`cdsbias.runs.folder.RunFolder`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cdsbias.benchmarks.results import Metric
from cdsbias.runs.folder import RunFolder


def read_points(output_dir: str | Path) -> list[dict[str, Any]]:
    """The evaluated points of a run, in step order (empty when there are none)."""
    return RunFolder(output_dir).points()


def headline_of(entry: dict[str, Any]) -> list[Metric]:
    """The headline metrics stored in one benchmark entry of a point."""
    return [Metric(**m) for m in entry.get("headline", [])]


def before_after(points: list[dict[str, Any]]) -> dict[str, Any]:
    """Headline numbers of a run, first vs last evaluated point (``points`` not empty).

    Returns:
        ``first_step``, ``last_step``, ``last_posthoc``, ``benchmarks`` ({name: [(metric,
        before, after)]}) and, when recorded, ``heldout_loss`` (before, after) and its
        relative change.
    """
    first, last = points[0], points[-1]
    summary: dict[str, Any] = {
        "first_step": first["step"],
        "last_step": last["step"],
        # The last point scored the model after its post-hoc method acted.
        "last_posthoc": bool(last.get("posthoc")),
        "benchmarks": {},
    }
    for name, entry in last.get("benchmarks", {}).items():
        before = first.get("benchmarks", {}).get(name, {}).get("metrics", {})
        summary["benchmarks"][name] = [
            (metric, before.get(metric.key), entry["metrics"].get(metric.key))
            for metric in headline_of(entry)
        ]
    if "heldout_loss" in first and "heldout_loss" in last:
        summary["heldout_loss"] = (first["heldout_loss"], last["heldout_loss"])
        summary["heldout_loss_change"] = last["heldout_loss"] / first["heldout_loss"] - 1
    return summary


def draw_curve(points: list[dict[str, Any]], path: Path) -> None:
    """Draws each benchmark's headline curves (with CIs) and the held-out loss vs step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not points:
        return
    names = sorted({n for p in points for n in p.get("benchmarks", {})})
    panels = len(names) + (1 if any("heldout_loss" in p for p in points) else 0)
    fig, axes = plt.subplots(1, max(panels, 1), figsize=(5.5 * max(panels, 1), 4), squeeze=False)
    for axis, name in zip(axes[0], names):
        curves: dict[str, list[tuple[int, float, float, float]]] = {}
        last = next(p["benchmarks"][name] for p in reversed(points) if name in p["benchmarks"])
        for p in points:
            for label, (value, low, high) in p["benchmarks"].get(name, {}).get("curve", {}).items():
                if value is not None:  # undefined at this point (e.g. a ratio of zeros): no dot
                    curves.setdefault(label, []).append((p["step"], value, low, high))
        for label, values in curves.items():
            steps = [v[0] for v in values]
            (line,) = axis.plot(steps, [v[1] for v in values], marker="o", label=label)
            lows = [v[2] if v[2] is not None else v[1] for v in values]
            highs = [v[3] if v[3] is not None else v[1] for v in values]
            axis.fill_between(steps, lows, highs, alpha=0.2, color=line.get_color())
        axis.axhline(0.0, color="grey", linewidth=0.8)
        axis.set_title(f"{name}: {last.get('curve_title') or 'headline metrics'}")
        axis.set_xlabel("step")
        axis.set_ylabel(last.get("curve_ylabel") or "value")
        axis.legend(fontsize=8)
    if panels > len(names):
        axis = axes[0][-1]
        losses = [(p["step"], p["heldout_loss"]) for p in points if "heldout_loss" in p]
        axis.plot([s for s, _ in losses], [v for _, v in losses], marker="o", color="black")
        axis.set_title("held-out MLM loss (original text)")
        axis.set_xlabel("step")
        axis.set_ylabel("loss")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
