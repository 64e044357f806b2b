"""What benchmarks produce and how it is written, read and shown.

:class:`BenchmarkResult` (rows, summary, metrics, report), the :class:`Metric` a benchmark
puts first, a :class:`Snapshot` of one evaluated step, number formatting for tables and
cards, and the atomic ``rows.tsv``/``summary.json`` writer.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cdsbias.io import atomic_output_dir

if TYPE_CHECKING:
    import pandas as pd
    from huggingface_hub import EvalResult


@dataclass
class BenchmarkResult:
    """What a benchmark run produces.

    Attributes:
        name: The benchmark's registry name.
        rows: The input rows, in input order, with the score columns added.
        summary: JSON-serialisable nested results (group means, CIs, tests, ...).
        metrics: Flat ``{name: float}`` scalars for trackers (W&B, TensorBoard).
        report: Human-readable table printed by the CLI.
        tables: Further tables, written beside ``rows.tsv`` as ``<name>.tsv`` (one row per
            test where a benchmark runs many, e.g. HolisticBias' descriptor pairs).
    """

    name: str
    rows: pd.DataFrame
    summary: dict[str, Any]
    metrics: dict[str, float] = field(default_factory=dict)
    report: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


@dataclass(frozen=True)
class Metric:
    """A headline metric of a benchmark.

    Attributes:
        key: Its key in :attr:`BenchmarkResult.metrics`.
        label: What a reader sees ("mean |gap|, male + female professions").
        unit: "nats", "%", "log2 ratio", "Cohen's d", ...
        better: ``"lower"`` (lower is better), ``"higher"``, or ``"closer"`` (closer to
            :attr:`ideal` is better, e.g. a gap of 0 or a stereotype score of 50%).
        ideal: The unbiased value.
    """

    key: str
    label: str
    unit: str
    better: Literal["lower", "higher", "closer"]
    ideal: float = 0.0

    @property
    def direction(self) -> str:
        """ "lower is better", "higher is better" or "closer to 50 is better"."""
        if self.better == "closer":
            return f"closer to {self.ideal:g} is better"
        return f"{self.better} is better"

    def distance(self, value: float) -> float:
        """How far ``value`` is from the unbiased value (``|value - ideal|`` for "closer")."""
        return abs(value - self.ideal) if self.better == "closer" else value

    def change(self, before: float | None, after: float | None) -> str:
        """``"dropped by 88.8% (better)"``-style text of a before -> after change.

        "closer" metrics compare the distance to :attr:`ideal`; the wording follows the
        sign ("dropped by 2.7%" / "rose by 2.7%"), never a negative percentage.
        """
        if before is None or after is None or not (math.isfinite(before) and
                                                   math.isfinite(after)):  # fmt: skip
            return "n/a"
        start, end = self.distance(before), self.distance(after)
        what = f"distance to {self.ideal:g} " if self.better == "closer" else ""
        if start == end:
            return f"{what}unchanged"
        verb = "dropped" if end < start else "rose"
        if start != 0:
            amount = f"{abs(end - start) / abs(start):.1%}"
        else:
            amount = f"{abs(end - start):.4g} {self.unit}"
        good = end < start if self.better in ("lower", "closer") else end > start
        return f"{what}{verb} by {amount} ({'better' if good else 'worse'})"


class UndefinedStatisticWarning(UserWarning):
    """A headline statistic is undefined (NaN) for the rows given, and why."""


def _is_numpy_noise(caught: warnings.WarningMessage) -> bool:
    """numpy's warnings on empty or degenerate samples, which name no statistic."""
    text = str(caught.message)
    return issubclass(caught.category, RuntimeWarning) and any(
        part in text
        for part in ("Mean of empty slice", "invalid value encountered", "divide by zero",
                     "Degrees of freedom <= 0")
    )  # fmt: skip


@dataclass(frozen=True)
class Snapshot:
    """One benchmark's results at one evaluated step, as a run folder keeps them."""

    step: int
    metrics: dict[str, float]
    summary: dict[str, Any] | None = None


def format_value(value: float | None, digits: int = 4) -> str:
    """Signed fixed-point; tiny values in scientific notation; never ``-0.0000``; n/a."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if value == 0 or abs(value) >= 10 ** -(digits - 1):
        text = f"{value:+.{digits}f}"
        return text.replace("-", "+", 1) if float(text) == 0 else text
    return f"{value:+.2e}"


def table_cell(text: str) -> str:
    """``text`` safe inside a markdown table cell (``|`` escaped)."""
    return text.replace("|", "\\|")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _clean_floats(value: Any) -> Any:
    """Turns NaN/inf into None so summary.json stays valid JSON."""
    if isinstance(value, dict):
        return {str(k): _clean_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_floats(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json(summary: dict[str, Any]) -> str:
    """Serialises a summary as strict JSON (NaN becomes null)."""
    return json.dumps(_clean_floats(summary), indent=2, default=_json_default) + "\n"


def write_result(result: BenchmarkResult, out_dir: str | Path) -> Path:
    """Writes ``OUT/<name>/rows.tsv``, ``summary.json`` and each of ``result.tables`` as
    ``<table>.tsv`` atomically; returns the folder
    (:func:`~cdsbias.benchmarks.axis_scope.result_folder_name`: ``crows_pairs@race`` for the
    key ``crows_pairs[race]``)."""
    from cdsbias.benchmarks.axis_scope import result_folder_name

    if "rows" in result.tables:
        raise ValueError(f"{result.name}: a further table may not be named 'rows'")
    final = Path(out_dir) / result_folder_name(result.name)
    with atomic_output_dir(final) as staging:
        result.rows.to_csv(staging / "rows.tsv", sep="\t", index=False, lineterminator="\n")
        for table, frame in result.tables.items():
            frame.to_csv(staging / f"{table}.tsv", sep="\t", index=False, lineterminator="\n")
        (staging / "summary.json").write_text(to_json(result.summary), encoding="utf-8")
    return final


def metrics_table(metrics: tuple[Metric, ...], before: Snapshot | None, after: Snapshot) -> str:
    """A model-card table of ``metrics`` before vs after training, with their change.

    With no headline metrics, every metric of ``after`` is listed (direction "closer").
    """
    lines = [
        f"| metric | unit | better | before (step {before.step if before else '-'}) "
        f"| after (step {after.step}) | change |",
        "|---|---|---|---|---|---|",
    ]
    metrics = metrics or tuple(Metric(key, key, "", "closer") for key in sorted(after.metrics))
    for metric in metrics:
        start = before.metrics.get(metric.key) if before else None
        end = after.metrics.get(metric.key)
        lines.append(
            f"| {table_cell(metric.label)} | {metric.unit} | {metric.direction} | "
            f"{format_value(start)} | {format_value(end)} | {metric.change(start, end)} |"
        )
    return "\n".join(lines)


def hub_eval_results(
    metrics: tuple[Metric, ...],
    snapshot: Snapshot,
    *,
    when: str,
    task_name: str,
    dataset_type: str,
    dataset_name: str,
    dataset_config: str,
) -> list[EvalResult]:
    """Hub ``EvalResult`` entries for the finite ``metrics`` of ``snapshot``.

    The step and ``when`` (before/after training) go into each metric's name and
    ``args`` so that both survive on the hub and round-trip.
    """
    from huggingface_hub import EvalResult

    results = []
    for metric in metrics:
        value = snapshot.metrics.get(metric.key)
        if value is None or not math.isfinite(value):
            continue
        results.append(
            EvalResult(
                task_type="fill-mask",
                task_name=task_name,
                dataset_type=dataset_type,
                dataset_name=dataset_name,
                dataset_config=dataset_config,
                metric_type=metric.key,
                metric_value=round(float(value), 6),
                metric_name=f"{metric.label} ({when}, step {snapshot.step})",
                metric_args={
                    "step": snapshot.step,
                    "when": when,
                    "unit": metric.unit,
                    "better": metric.direction,
                },
            )
        )
    return results
