"""``cdsbias study table``: one row per method (base first), one column per metric.

Every value is read from the cells' run folders through the readers ``cdsbias compare``
uses (:class:`cdsbias.runs.folder.RunFolder` points, :func:`cdsbias.runs.points.headline_of`,
:mod:`cdsbias.runs.downstream_results`): each benchmark's headline metrics under its result
key (an axis-scoped benchmark's key names its axis, :mod:`cdsbias.benchmarks.axis_scope`),
the held-out MLM loss, and each downstream task's headline metrics. A row is one model,
method and fitted axis; an entry is the mean over seeds, the seed SD, the two-level
bootstrap interval and the change against base with its test (:mod:`cdsbias.studies.stats`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdsbias.benchmarks.results import Metric
from cdsbias.studies.cells import Cell
from cdsbias.studies.spec import BASE
from cdsbias.studies.state import DONE, StudyFolder
from cdsbias.studies.stats import SeedValues, interval, rng_for, standard_error, two_sided_p

HELDOUT = Metric("heldout_loss", "held-out MLM loss (original text)", "nats", "lower")


@dataclass(frozen=True)
class Column:
    """One table column: a benchmark's headline metric (or held-out loss, a downstream
    metric) under its result key."""

    key: str  # "crows_pairs[race]/metric_score", "heldout_loss", "downstream:task/metric"
    source: str  # the benchmark's result key, "heldout" or "downstream:<task>"
    metric: Metric

    @property
    def label(self) -> str:
        where = "" if self.source == "heldout" else f"{self.source}: "
        return f"{where}{self.metric.label} ({self.metric.unit}; {self.metric.direction})"


@dataclass(frozen=True)
class Value:
    """One column of one cell: after (last point) and before (its own first point)."""

    after: float
    after_error: float
    before: float | None = None
    before_error: float = 0.0


@dataclass
class Entry:
    """One row x column of the table."""

    n_seeds: int
    mean: float
    sd: float | None
    ci: tuple[float, float]
    examples_level: bool
    change: float | None = None
    change_sd: float | None = None
    change_ci: tuple[float, float] | None = None
    p: float | None = None
    same_as_base: bool = False
    best: bool = False
    same_as_best: bool = False
    published: list[str] = field(default_factory=list)


@dataclass
class Row:
    """One model, method and fitted axis."""

    model: str
    method: str
    axis: str
    word_lists: str
    cells: list[Cell]
    #: The published method the row reproduces (its method's ``published_as``), or "".
    published_as: str = ""
    done: list[Cell] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # cell id -> error line
    pending: list[str] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict)
    #: column key -> {seed: (value, test-example standard error)} of the finished cells.
    per_seed: dict[str, dict[int, tuple[float, float]]] = field(default_factory=dict)

    def seed_values(self, key: str) -> SeedValues:
        """Column ``key``'s per-seed values and test-example errors, in the order of the
        row's finished cells (what every bootstrap of the row resamples)."""
        values, errors = zip(*self.per_seed[key].values())
        return SeedValues(values, errors)

    @property
    def label(self) -> str:
        return BASE if self.method == BASE else f"{self.method} ({self.axis})"


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _interval_of(entry: dict[str, Any], metric: Metric) -> list[float] | None:
    """The benchmark's recorded 95% interval of ``metric`` at a point, if any: its
    ``intervals`` (axis-scoped entries), else the curve point of the same label or, failing
    that, of exactly the same value (BEC-Pro's curve names a gap by its group)."""
    recorded = (entry.get("intervals") or {}).get(metric.key)
    if recorded:
        return recorded
    curve = entry.get("curve") or {}
    value = (entry.get("metrics") or {}).get(metric.key)
    same = [p for p in curve.values() if p and len(p) == 3 and p[0] == value]
    point = curve.get(metric.label) or (same[0] if len(same) == 1 else None)
    if point and len(point) == 3 and point[1] is not None and point[2] is not None:
        return [point[1], point[2]]
    return None


def read_cell(folder: Path) -> tuple[dict[Column, Value], dict[str, Any]]:
    """A finished cell's values by column, and each benchmark entry of its last point."""
    from cdsbias.runs.downstream_results import (
        BASE_ROLE,
        FINAL_ROLE,
        extrinsic_values,
        read_downstream,
    )
    from cdsbias.runs.folder import RunFolder
    from cdsbias.runs.points import headline_of

    points = RunFolder(folder).points()
    first, last = points[0], points[-1]
    own_before = len(points) > 1
    values: dict[Column, Value] = {}
    for key, entry in last.get("benchmarks", {}).items():
        start = first.get("benchmarks", {}).get(key, {})
        for metric in headline_of(entry):
            after = entry.get("metrics", {}).get(metric.key)
            if not _finite(after):
                continue
            before = start.get("metrics", {}).get(metric.key) if own_before else None
            values[Column(f"{key}/{metric.key}", key, metric)] = Value(
                float(after),
                standard_error(_interval_of(entry, metric)),
                float(before) if _finite(before) else None,
                standard_error(_interval_of(start, metric)) if own_before else 0.0,
            )
    if _finite(last.get("heldout_loss")):
        before = first.get("heldout_loss") if own_before else None
        values[Column("heldout_loss", "heldout", HELDOUT)] = Value(
            float(last["heldout_loss"]), 0.0, float(before) if _finite(before) else None
        )
    summaries = read_downstream(folder)
    finals, bases = extrinsic_values(summaries, FINAL_ROLE), extrinsic_values(summaries, BASE_ROLE)
    for key, value in finals.items():
        if not _finite(value.value):
            continue
        metric = Metric(
            key, value.label, "", value.better if value.better != "closer" else "higher"
        )
        base = bases.get(key)
        ci = [value.ci_low, value.ci_high]
        values[Column(f"downstream:{key}", f"downstream:{key.split('/')[0]}", metric)] = Value(
            float(value.value),
            standard_error(ci),
            base.value if base is not None and _finite(base.value) else None,
            standard_error([base.ci_low, base.ci_high]) if base is not None else 0.0,
        )
    return values, last.get("benchmarks", {})


def _word_lists(axis: str) -> str:
    """Whose word lists the fitted axis uses (:attr:`cdsbias.axes.BiasAxis.word_lists`:
    ``cdsbias``, ``bias-bench``), or ``file NAME`` for an attribute file of the user's."""
    from cdsbias.axes import get_axis
    from cdsbias.errors import CdsbiasError

    try:
        bias_axis = get_axis(axis)
    except CdsbiasError:
        return "unknown (the axis cannot be read here)"
    if bias_axis.word_lists == "file":
        return f"file {Path(str(bias_axis.source).split('#', 1)[0]).name}"
    return bias_axis.word_lists


def build_rows(
    folder: StudyFolder, cells: Sequence[Cell], published_as: dict[str, str] | None = None
) -> list[Row]:
    """The table's rows, in spec order (each model's base first), each with its cells'
    statuses; values are filled by :func:`fill_entries`. ``published_as`` maps a method to
    the published method it reproduces (the spec's ``published_as`` keys)."""
    rows: dict[tuple[str, str, str], Row] = {}
    for cell in cells:
        key = (cell.model, cell.method, cell.axis)
        if key not in rows:
            lists = _word_lists(str(cell.keys.get("bias_axis", cell.axis)))
            published = (published_as or {}).get(cell.method, "")
            rows[key] = Row(cell.model, cell.method, cell.axis, lists, [], published)
        row = rows[key]
        row.cells.append(cell)
        status = folder.status(cell)
        if status.status == DONE:
            row.done.append(cell)
        elif status.status == "failed":
            row.failed[cell.id] = status.note
        else:
            row.pending.append(cell.id)
    return list(rows.values())


def _fitted_axis(row: Row) -> str:
    """The registered axis a row's method was fitted on, variants read as their base
    (``race@bias-bench`` -> ``race``): what a published value's ``fitted_axis`` names."""
    from cdsbias.axes import get_axis
    from cdsbias.errors import CdsbiasError

    reference = str(row.cells[0].keys.get("bias_axis", row.axis))
    try:
        axis = get_axis(reference)
    except CdsbiasError:
        return reference
    return axis.variant_of or axis.name


def _published(
    model_id: str | None, column: Column, value: float, entry: dict[str, Any], row: Row
) -> list[str]:
    """The benchmark's published values beside the measured one
    (:func:`cdsbias.benchmarks.published.published_notes`, the benchmark's own list): for
    the base row, the model's as released; for a method row with ``published_as``, that
    method's on the axis the row fitted."""
    if not model_id or column.source in ("heldout",) or column.source.startswith("downstream:"):
        return []
    if row.method != BASE and not row.published_as:
        return []
    from cdsbias.benchmarks import get_benchmark
    from cdsbias.benchmarks.published import published_notes
    from cdsbias.errors import CdsbiasError

    try:
        benchmark = get_benchmark(column.source)
    except CdsbiasError:
        return []
    method = {} if row.method == BASE else {
        "method": row.published_as, "fitted_axis": _fitted_axis(row), "word_lists": row.word_lists
    }  # fmt: skip
    return published_notes(
        benchmark.published,
        model_id,
        {column.metric.key: value},
        entry.get("options") or {},
        **method,
    )


def fill_entries(folder: StudyFolder, rows: Sequence[Row]) -> list[Column]:
    """Reads every finished cell and fills each row's entries; returns the columns in
    first-seen order (benchmarks, then held-out loss, then downstream)."""
    from cdsbias.runs.folder import RunFolder

    read: dict[str, tuple[dict[Column, Value], dict[str, Any]]] = {}
    for row in rows:
        for cell in row.done:
            read[cell.id] = read_cell(cell.folder(folder.path))
    columns: dict[str, Column] = {}
    for values, _ in read.values():
        for column in values:
            columns.setdefault(column.key, column)
    order = {"heldout": 1}
    ordered = sorted(
        columns.values(),
        key=lambda c: 2 if c.source.startswith("downstream:") else order.get(c.source, 0),
    )
    bases = {(r.model, r.axis): r for r in rows if r.method == BASE and r.done}
    for row in rows:
        base_row = bases.get((row.model, row.axis)) or next(
            (r for r in rows if r.method == BASE and r.model == row.model and r.done), None
        )
        base = read.get(base_row.done[0].id) if base_row is not None else None
        first = RunFolder(row.done[0].folder(folder.path)) if row.done else None
        model_id = first.run_info().get("base_model") if first is not None else None
        for column in ordered:
            done = [(c, read[c.id][0][column]) for c in row.done if column in read[c.id][0]]
            if not done:
                continue
            seeds = [value for _, value in done]
            row.per_seed[column.key] = {c.seed: (v.after, v.after_error) for c, v in done}
            after = row.seed_values(column.key)
            rng = rng_for(row.model, row.method, row.axis, column.key)
            entry = Entry(
                len(seeds),
                after.mean,
                after.sd,
                interval(after.replicates(rng)),
                after.has_examples,
            )
            benchmark_entry = read[row.done[0].id][1].get(column.source, {})
            entry.published = _published(model_id, column, after.mean, benchmark_entry, row)
            if row.method != BASE:
                base_value = base[0].get(column) if base is not None else None
                deltas, errors = [], []
                for value in seeds:
                    if value.before is not None:
                        deltas.append(value.after - value.before)
                        errors.append(math.hypot(value.after_error, value.before_error))
                    elif base_value is not None:
                        deltas.append(value.after - base_value.after)
                        errors.append(math.hypot(value.after_error, base_value.after_error))
                if len(deltas) == len(seeds):
                    change = SeedValues(tuple(deltas), tuple(errors))
                    replicates = change.replicates(
                        rng_for("change", row.model, row.method, row.axis, column.key)
                    )
                    entry.change, entry.change_sd = change.mean, change.sd
                    if change.has_spread:
                        entry.change_ci = interval(replicates)
                        entry.p = two_sided_p(replicates)
                        entry.same_as_base = entry.change_ci[0] <= 0 <= entry.change_ci[1]
            row.entries[column.key] = entry
    _mark_best(rows, ordered)
    return ordered


def badness(value: Any, metric: Metric) -> Any:
    """How biased ``value`` (a number or an array) is in ``metric``'s direction: lower is
    better (the value, its distance to the ideal for "closer" metrics, minus it for
    "higher" ones)."""
    distance = abs(value - metric.ideal) if metric.better == "closer" else value
    return -distance if metric.better == "higher" else distance


def _mark_best(rows: Sequence[Row], columns: Sequence[Column]) -> None:
    """Marks, per model and column, the method whose mean is least biased (best in the
    metric's direction) and every method whose bootstrap difference from it contains 0."""
    for model in dict.fromkeys(r.model for r in rows):
        methods = [r for r in rows if r.model == model and r.method != BASE]
        for column in columns:
            metric = column.metric
            scored = [r for r in methods if column.key in r.entries]
            if len(scored) < 1:
                continue

            best = min(scored, key=lambda r: badness(r.entries[column.key].mean, metric))
            best.entries[column.key].best = True
            reps = {}
            for row in scored:
                values = row.seed_values(column.key)
                reps[id(row)] = badness(
                    values.replicates(rng_for("best", row.model, row.method, row.axis, column.key)),
                    metric,
                )
            spread = {id(r): r.seed_values(column.key).has_spread for r in scored}
            for row in scored:
                if row is best or not (spread[id(row)] or spread[id(best)]):
                    continue
                low, high = interval(reps[id(row)] - reps[id(best)])
                row.entries[column.key].same_as_best = low <= 0 <= high


def load_study(study: str | Path) -> tuple[StudyFolder, Any, list[Cell]]:
    """A study folder, the spec it was last run with (``study.yaml``) and its cells.

    Raises:
        CdsbiasError: The folder holds no study, or its spec no longer loads here.
    """
    from cdsbias.studies.cells import expand
    from cdsbias.studies.spec import StudySpec, _build

    folder = StudyFolder(study)
    values = dict(folder.spec_values())
    source = values.pop("spec_file", None)
    spec: StudySpec = _build(StudySpec, values, "")
    spec.source = source
    return folder, spec, expand(spec)


def study_table(study: str | Path) -> tuple[Any, list[Row], list[Column]]:
    """The study's spec, rows and columns, read from its folder.

    Raises:
        CdsbiasError: The folder holds no study.
    """
    folder, spec, cells = load_study(study)
    published_as = {
        m: str(k["published_as"]) for m, k in spec.methods.items() if "published_as" in k
    }
    rows = build_rows(folder, cells, published_as)
    columns = fill_entries(folder, rows)
    return spec, rows, columns
