"""The cross-axis matrix: what a run did to each bias axis it measured.

A run that scores several axes (recipe ``bias_axes: [gender, race, religion]``) records
each axis-scoped benchmark under its own key (``NAME[race]``) with the axis, the 95%
intervals of its headline metrics and their name (:func:`cdsbias.train.callback.record`). Here the
first headline metric of each such entry is read at the first and the last evaluated point,
so that ``cdsbias compare`` prints one methods x axes table per benchmark ("debias gender,
watch race and religion") and the model card one axes x benchmarks table.

The change is ``after - before`` in the metric's unit. Each value carries the interval its
benchmark computed (a Wilson score interval over pairs, a bootstrap over clusters, or none:
the notes name each); a value whose interval contains the unbiased value is marked, because
it cannot be told from it at 95%.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdsbias.benchmarks import split_key
from cdsbias.benchmarks.results import Metric, table_cell
from cdsbias.benchmarks.stats import interval_contains
from cdsbias.runs.points import headline_of

#: Marks a value whose 95% interval contains the metric's unbiased value.
UNDECIDED = "‡"


@dataclass(frozen=True)
class AxisChange:
    """One axis-scoped benchmark's first headline metric, first vs last point of a run."""

    benchmark: str
    axis: str
    metric: Metric
    before: float | None
    after: float | None
    before_ci: tuple[float, float] | None = None
    after_ci: tuple[float, float] | None = None
    #: The interval's name, as the benchmark recorded it ("" when it has none).
    interval: str = ""

    @property
    def change(self) -> float | None:
        """``after - before`` in the metric's unit; None when either is missing."""
        if not (_finite(self.before) and _finite(self.after)):
            return None
        return float(self.after) - float(self.before)  # type: ignore[arg-type]

    def _value(self, value: float | None, ci: tuple[float, float] | None) -> str:
        if not _finite(value):
            return "n/a"
        text = f"{value:.2f}" if abs(float(value)) >= 1 else f"{value:.3f}"  # type: ignore[arg-type]
        if ci is not None and all(map(_finite, ci)):
            text += f" [{ci[0]:.1f}, {ci[1]:.1f}]"
            if self.metric.better == "closer" and interval_contains(*ci, self.metric.ideal):
                text += UNDECIDED
        return text

    @property
    def cell(self) -> str:
        """``62.86 [53.3, 71.5] → 55.24 [45.7, 64.4]‡ (-7.62, better)``."""
        change = self.change
        text = f"{self._value(self.before, self.before_ci)} → "
        text += self._value(self.after, self.after_ci)
        if change is None:
            return text
        start, end = self.metric.distance(self.before), self.metric.distance(self.after)  # type: ignore[arg-type]
        if start == end:
            verdict = "unchanged"
        else:
            good = end < start if self.metric.better in ("lower", "closer") else end > start
            verdict = "better" if good else "worse"
        return f"{text} ({change:+.2f}, {verdict})"


def _finite(value: Any) -> bool:
    return value is not None and math.isfinite(float(value))


def _interval(entry: Mapping[str, Any] | None, key: str) -> tuple[float, float] | None:
    found = ((entry or {}).get("intervals") or {}).get(key)
    return (float(found[0]), float(found[1])) if found else None


def axis_changes(points: Sequence[Mapping[str, Any]]) -> list[AxisChange]:
    """The axis-scoped entries of the last point, against the first (``points`` in order).

    Entries without an axis (a gender run's unscoped benchmarks) are not part of it.
    """
    if not points:
        return []
    first, last = points[0], points[-1]
    changes = []
    for key, entry in last.get("benchmarks", {}).items():
        axis = entry.get("axis")
        headline = headline_of(entry)
        if axis is None or not headline:
            continue
        metric = headline[0]
        start = first.get("benchmarks", {}).get(key)
        changes.append(
            AxisChange(
                benchmark=split_key(key)[0],
                axis=str(axis),
                metric=metric,
                before=(start or {}).get("metrics", {}).get(metric.key),
                after=entry.get("metrics", {}).get(metric.key),
                before_ci=_interval(start, metric.key),
                after_ci=_interval(entry, metric.key),
                interval=str(entry.get("interval") or ""),
            )
        )
    return changes


def _ordered(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _note(changes: Sequence[AxisChange]) -> list[str]:
    kinds = {c.benchmark: c.interval for c in changes}
    named = "; ".join(f"{name}: {kind or 'none computed'}" for name, kind in kinds.items())
    return [
        "Cells: before → after (first → last evaluated step) with 95% intervals "
        f"({named}), the change after − before and whether it is better. {UNDECIDED}: the "
        "interval contains the unbiased value; that score cannot be told from it."
    ]


def matrix_markdown(rows: Sequence[tuple[str, str, str, Sequence[AxisChange]]]) -> str:
    """Methods x axes tables, one per axis-scoped benchmark; empty when no run has one.

    Args:
        rows: Per run: label, method, the axis it was debiased for, its axis changes.
    """
    every = [change for *_, changes in rows for change in changes]
    if not every:
        return ""
    lines = ["## Cross-axis matrix", ""]
    for benchmark in _ordered([c.benchmark for c in every]):
        own = [c for c in every if c.benchmark == benchmark]
        axes = _ordered([c.axis for c in own])
        metric = own[0].metric
        lines += [
            f"### {benchmark}: {metric.label.split(' (')[0]} ({metric.unit}; {metric.direction})",
            "",
            "| run | method | debiased for | " + " | ".join(axes) + " |",
            "|---|---|---|" + "---|" * len(axes),
        ]
        for label, method, debiased, changes in rows:
            by_axis = {c.axis: c for c in changes if c.benchmark == benchmark}
            cells = [label, method, debiased]
            cells += [by_axis[a].cell if a in by_axis else "" for a in axes]
            lines.append("| " + " | ".join(map(table_cell, cells)) + " |")
        lines.append("")
    lines += [f"- {note}" for note in _note(every)]
    return "\n".join(lines) + "\n"


def card_axes_section(
    debiased: str, changes: Sequence[AxisChange], *, word_lists: str | None = None
) -> list[str]:
    """The model card's "Bias axes" section: the axis debiased for (with whose word lists,
    ``BiasAxis.word_lists``, when known), and every axis measured before and after (axes x
    benchmarks)."""
    lists = f" (word lists: {word_lists})" if word_lists else ""
    lines = ["## Bias axes", "", f"Debiased for: **{debiased}**{lists}."]
    if not changes:
        return [*lines, ""]
    axes = _ordered([c.axis for c in changes])
    benchmarks = _ordered([c.benchmark for c in changes])
    lines += [
        f"Measured before and after training: {', '.join(axes)}.",
        "",
        "| axis | " + " | ".join(
            f"{b}: {next(c.metric for c in changes if c.benchmark == b).label.split(' (')[0]}"
            for b in benchmarks
        ) + " |",
        "|---|" + "---|" * len(benchmarks),
    ]  # fmt: skip
    for axis in axes:
        by_benchmark = {c.benchmark: c for c in changes if c.axis == axis}
        cells = [axis] + [by_benchmark[b].cell if b in by_benchmark else "" for b in benchmarks]
        lines.append("| " + " | ".join(map(table_cell, cells)) + " |")
    lines += ["", *_note(changes), ""]
    return lines
