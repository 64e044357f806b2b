"""Reading finished training runs for comparison: what each method bought and cost.

Everything comes from a run's own folder: ``bias_metrics.jsonl`` (headline metrics with
their direction), ``recipe.yaml`` (corpus treatment), ``run_info.json`` (method and
trainable parameters), the saved weights' header, ``trainer_state.json`` (wall time).

"Reduction" is the relative change of a metric in its own better direction, the signed
form of :meth:`cdsbias.benchmarks.Metric.change`: positive means less biased (lower,
higher, or closer to the ideal value, whichever the benchmark declares).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdsbias.benchmarks import Metric, format_value
from cdsbias.cds.treatment import CorpusTreatment
from cdsbias.errors import CdsbiasError
from cdsbias.methods import plan_from_values
from cdsbias.runs.axes_matrix import AxisChange, axis_changes
from cdsbias.runs.folder import METRICS_FILE, RECIPE_FILE, RunFolder, axis_name
from cdsbias.runs.points import before_after


def bias_reduction(metric: Metric, before: float | None, after: float | None) -> float | None:
    """Relative reduction of bias from ``before`` to ``after``; positive = better.

    "lower" and "closer" metrics compare :meth:`Metric.distance` (the distance to the ideal
    value for "closer"), "higher" metrics the value itself; the change is relative to the
    starting point, as :meth:`Metric.change` words it. ``None`` when either value is
    missing or the start is 0 (no relative change exists).
    """
    if before is None or after is None or not (math.isfinite(before) and math.isfinite(after)):
        return None
    start, end = metric.distance(before), metric.distance(after)
    if start == 0:
        return None
    gain = end - start if metric.better == "higher" else start - end
    return gain / abs(start)


@dataclass(frozen=True)
class MetricChange:
    """One headline metric of one benchmark, first vs last evaluated step of a run."""

    benchmark: str
    metric: Metric
    before: float | None
    after: float | None

    @property
    def column(self) -> str:
        return f"{self.benchmark}/{self.metric.key}"

    @property
    def reduction(self) -> float | None:
        return bias_reduction(self.metric, self.before, self.after)

    @property
    def cell(self) -> str:
        """``+0.2000 → +0.0500 (75.0% better)``."""
        reduction = self.reduction
        if reduction is None:
            change = "n/a"
        elif reduction == 0:
            change = "unchanged"
        else:
            change = f"{abs(reduction):.1%} {'better' if reduction > 0 else 'worse'}"
        return f"{format_value(self.before)} → {format_value(self.after)} ({change})"


@dataclass
class RunSummary:
    """What the comparison shows of one run folder."""

    folder: Path
    label: str
    method: str
    methods: list[str]  # registry names of the methods that acted
    trainable_parameters: int | None
    total_parameters: int | None
    parameters_source: str  # "run_info", "weights" or "unknown"
    wall_time: float | None  # seconds
    wall_time_source: str  # "trainer_state", "file times" or "unknown"
    resumed: bool
    first_step: int
    last_step: int
    metrics: dict[str, MetricChange] = field(default_factory=dict)
    heldout_loss: tuple[float, float] | None = None
    #: What the methods cost beyond training (``{column: text}``, e.g. inference cost).
    costs: dict[str, str] = field(default_factory=dict)
    #: Whether the last point scored the model after its post-hoc method acted.
    last_posthoc: bool = False
    #: The axis the run mitigated (recipe ``bias_axis``).
    debiased_for: str = "gender"
    #: Each axis-scoped benchmark's first headline metric, before -> after (the matrix).
    axis_changes: list[AxisChange] = field(default_factory=list)

    @property
    def heldout_increase(self) -> float | None:
        """Relative change of the held-out MLM loss (0.05 = 5% higher after training)."""
        if self.heldout_loss is None or not self.heldout_loss[0]:
            return None
        return self.heldout_loss[1] / self.heldout_loss[0] - 1


# --------------------------------------------------------------------------- reading
def corpus_treatment(recipe: dict[str, Any]) -> str:
    """``CDS p=0.5``, ``CDA`` or ``original text``: what training did to the corpus, as the
    run's effective recipe says (empty when the run recorded no corpus settings)."""
    return CorpusTreatment(recipe).label if "cds_mode" in recipe else ""


def count_saved_parameters(folder: Path) -> int | None:
    """Parameters in the run's saved weights, read from safetensors headers only.

    Looks at the final model in ``folder``, else the latest ``checkpoint-N``. Tied weights
    are stored once, so this equals ``model.num_parameters()``. ``None`` when there are no
    safetensors weights (e.g. only ``pytorch_model.bin``, which cannot be read without
    loading it).
    """
    checkpoints = RunFolder(folder).checkpoints()
    for place in [folder, *reversed(checkpoints)]:
        index = place / "model.safetensors.index.json"
        if index.exists():
            shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            files = [place / shard for shard in shards]
        elif (place / "model.safetensors").exists():
            files = [place / "model.safetensors"]
        else:
            continue
        from safetensors import SafetensorError

        try:
            return sum(_safetensors_count(path) for path in files)
        except (OSError, ValueError, KeyError, SafetensorError) as exc:
            warnings.warn(f"cannot read the weights header of {place}: {exc}", stacklevel=2)
            return None
    return None


def _safetensors_count(path: Path) -> int:
    """Parameters in one safetensors file, from its header: no tensor is read."""
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as weights:
        return sum(math.prod(weights.get_slice(name).get_shape()) for name in weights.keys())  # noqa: SIM118


def _wall_time(run: RunFolder) -> tuple[float | None, str]:
    # train.py saves the Trainer state at the end (Trainer.save_state()); runs from before
    # it did have no train_runtime, and their file times give the span instead.
    history = run.trainer_state().get("log_history") or []
    if history:
        runtimes = [e["train_runtime"] for e in history if "train_runtime" in e]
        if runtimes:
            return float(sum(runtimes)), "trainer_state"
    recipe_file = run.path / RECIPE_FILE
    if recipe_file.exists():
        # recipe.yaml is written when training starts, bias_metrics.jsonl after the last
        # evaluation: the span is the run's wall time, bias evaluations included.
        span = run.metrics_file.stat().st_mtime - recipe_file.stat().st_mtime
        if span > 0:
            return span, "file times"
    return None, "unknown"


def read_run(folder: str | Path) -> RunSummary:
    """Reads one ``train.py`` output folder.

    Raises:
        CdsbiasError: The folder is missing, is not a run, or holds no evaluation.
    """
    folder = Path(folder)
    run = RunFolder(folder)
    if not folder.is_dir():
        raise CdsbiasError(f"{folder} is not a folder; pass train.py output folders.")
    if not (folder / METRICS_FILE).exists():
        raise CdsbiasError(
            f"{folder} is not a cdsbias run: it has no {METRICS_FILE}; pass a train.py "
            "output_dir (not a checkpoint-N folder)."
        )
    try:
        points = run.points()
    except (ValueError, KeyError) as exc:
        raise CdsbiasError(f"{folder / METRICS_FILE} is not valid run output: {exc}") from None
    if not points:
        raise CdsbiasError(f"{folder / METRICS_FILE} has no evaluation points yet.")
    summary = before_after(points)
    # Without the effective recipe the method and treatment would be the defaults' (as on
    # a card, cdsbias.runs.card): refused, naming the file.
    recipe, info = run.require_recipe(), run.run_info()
    treatment = corpus_treatment(recipe or info.get("card_recipe", {}))
    method = info.get("method") or {}
    # run_info.json of release 0.2 recorded the parameter-efficient method beside the label.
    recorded = {"peft_method": method["peft_method"]} if "peft_method" in method else {}
    plan = plan_from_values({**recorded, **recipe})
    if method:
        trainable, total = method.get("trainable_parameters"), method.get("total_parameters")
        source = "run_info"
    else:
        # A run that did not record its method counts: what its saved weights hold (a run
        # without a parameter-efficient method trained every saved parameter).
        trainable = total = count_saved_parameters(folder)
        source = "weights" if trainable is not None else "unknown"
    label = method.get("label") or plan.label()
    wall_time, wall_source = _wall_time(run)
    resume = recipe.get("resume_from_checkpoint")
    changes = {
        change.column: change
        for name, entries in summary["benchmarks"].items()
        for change in (MetricChange(name, m, before, after) for m, before, after in entries)
    }
    return RunSummary(
        folder=folder,
        label=str(recipe.get("run_name") or folder.resolve().name),
        method=f"{label} · {treatment}" if treatment else label,
        methods=method.get("methods") or plan.names,
        trainable_parameters=trainable,
        total_parameters=total,
        parameters_source=source,
        wall_time=wall_time,
        wall_time_source=wall_source,
        resumed=resume not in (None, False) and str(resume).lower() not in ("false", "none", ""),
        first_step=summary["first_step"],
        last_step=summary["last_step"],
        metrics=changes,
        heldout_loss=summary.get("heldout_loss"),
        costs=dict(method.get("costs") or {}),
        last_posthoc=summary["last_posthoc"],
        debiased_for=axis_name(recipe),
        axis_changes=axis_changes(points),
    )


def read_runs(folders: Sequence[str | Path]) -> list[RunSummary]:
    """Reads every run; labels that two runs share get the folder path that tells them apart.

    Raises:
        CdsbiasError: A folder is given twice, or is not a run (see :func:`read_run`).
    """
    resolved = [Path(f).resolve() for f in folders]
    for i, path in enumerate(resolved):
        if path in resolved[:i]:
            raise CdsbiasError(f"{folders[i]} is given twice; pass each run once.")
    runs = [read_run(f) for f in folders]
    for label in {r.label for r in runs}:
        group = [i for i, r in enumerate(runs) if r.label == label]
        if len(group) < 2:
            continue
        parts = [resolved[i].parts for i in group]
        depth = next(
            n
            for n in range(1, max(map(len, parts)) + 1)
            if len({p[-n:] for p in parts}) == len(parts)
        )
        for i, part in zip(group, parts):
            suffix = "/".join(part[-depth:])
            runs[i].label = suffix if label == resolved[i].name else f"{label} ({suffix})"
    return runs


# --------------------------------------------------------------------------- the table
def cost_columns(runs: Sequence[RunSummary]) -> list[str]:
    """Every cost any run's methods recorded (the union), in first-seen order."""
    return list(dict.fromkeys(name for run in runs for name in run.costs))


def metric_columns(runs: Sequence[RunSummary]) -> list[MetricChange]:
    """Every headline metric any run recorded (the union), in first-seen order."""
    seen: dict[str, MetricChange] = {}
    for run in runs:
        for column, change in run.metrics.items():
            seen.setdefault(column, change)
    return list(seen.values())


def choose_metric(columns: Sequence[MetricChange], name: str | None) -> MetricChange:
    """The plotted metric: ``NAME/KEY``, or the first benchmark's first headline metric."""
    if not columns:
        raise CdsbiasError("None of the runs recorded a headline metric; nothing to compare.")
    if name is None:
        return columns[0]
    for column in columns:
        if column.column == name:
            return column
    available = ", ".join(c.column for c in columns)
    raise CdsbiasError(f"--metric {name}: no run has that headline metric; use one of {available}.")
