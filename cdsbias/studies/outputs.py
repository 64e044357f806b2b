"""What ``cdsbias study table`` writes: ``table.md``, ``table.csv``, ``table.json``,
``heatmap.png`` (methods x axes, the change), ``pareto.png`` (bias removed against the
held-out loss change, seed error bars), and the W&B Table when the study logs to W&B.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cdsbias.benchmarks.results import format_value, table_cell
from cdsbias.io import atomic_path, atomic_write_text
from cdsbias.studies.ranking import rank_methods, ranking_text
from cdsbias.studies.spec import BASE
from cdsbias.studies.stats import N_REPLICATES
from cdsbias.studies.table import Column, Entry, Row

TABLE_DIR = "table"
FILES = ("table.md", "table.csv", "table.json", "heatmap.png", "pareto.png")
SAME_AS_BASE, SAME_AS_BEST, BEST = "°", "≈", "★"


def _number(value: float | None) -> str:
    return format_value(value)


def _p(value: float | None) -> str:
    """A bootstrap p-value; 0 of the replicates is ``p<1/N``."""
    if value is None:
        return "p=n/a"
    return f"p<{1 / N_REPLICATES:.2g}" if value == 0 else f"p={value:.3g}"


def value_text(entry: Entry) -> str:
    """``mean ± sd [low, high]``: the SD with two seeds or more, the interval where there
    is something to resample (two seeds, or a test-example level)."""
    text = _number(entry.mean)
    if entry.sd is not None:
        text += f" ± {_number(entry.sd).lstrip('+')}"
    if entry.n_seeds > 1 or entry.examples_level:
        text += f" [{_number(entry.ci[0])}, {_number(entry.ci[1])}]"
    return text


def change_text(entry: Entry) -> str | None:
    """``+x [low, high] p=…`` and the mark of a change that has an interval; None else."""
    if entry.change is None or entry.change_ci is None:
        return None
    low, high = (_number(v) for v in entry.change_ci)
    text = f"{_number(entry.change)} [{low}, {high}] {_p(entry.p)}"
    return text + f" {SAME_AS_BASE}" if entry.same_as_base else text


def entry_text(entry: Entry) -> str:
    """``mean ± sd [low, high]; Δ +x [low, high] p=…`` with the marks."""
    text = value_text(entry)
    change = change_text(entry)
    if change is not None:
        text += f"; Δ {change}"
    elif entry.change is not None:  # one seed, no interval: nothing to test with
        text += f"; Δ {_number(entry.change)} (no interval: 1 seed)"
    if entry.best:
        text += f" {BEST}"
    elif entry.same_as_best:
        text += f" {SAME_AS_BEST}"
    return text


def _status(row: Row) -> str:
    parts = [f"{len(row.done)}/{len(row.cells)} seeds"]
    if row.failed:
        parts.append(f"{len(row.failed)} failed")
    if row.pending:
        parts.append(f"{len(row.pending)} pending")
    return ", ".join(parts)


def markdown(
    spec: Any, rows: Sequence[Row], columns: Sequence[Column], ranked: Sequence[dict[str, Any]]
) -> str:
    """The table with its notes (how each number was made, the rankings ``ranked`` of
    :func:`rankings`, failures, published values)."""
    header = ["model", "row", "word lists", "cells", *(c.label for c in columns)]
    lines = ["| " + " | ".join(map(table_cell, header)) + " |", "|" + "---|" * len(header)]
    for row in rows:
        label = row.label
        if row.method == BASE and sum(r.model == row.model and r.method == BASE for r in rows) > 1:
            label = f"{BASE} ({row.axis})"  # one base cell per axis: say which
        cells = [row.model, label, row.word_lists, _status(row)]
        for column in columns:
            entry = row.entries.get(column.key)
            cells.append(
                entry_text(entry) if entry else ("failed" if row.failed and not row.done else "")
            )
        lines.append("| " + " | ".join(map(table_cell, cells)) + " |")
    notes = [
        "Each entry: mean over seeds ± seed SD (ddof 1), then the 95% interval of a two-level "
        "bootstrap (seeds resampled; each seed's test-example error from its benchmark's own "
        "95% interval, normal approximation; 2,000 replicates; cdsbias/studies/stats.py).",
        "Δ: the change against base, per seed after − before (the run's own step-0 point, else "
        "the base row), with its two-level bootstrap interval and two-sided bootstrap p "
        f"(before and after drawn independently: conservative). {SAME_AS_BASE}: the interval "
        f"of Δ contains 0 (cannot be told from base). {BEST}: the model's best method in that "
        "column (least biased; for the loss, lowest) by its mean; "
        f"{SAME_AS_BEST}: its difference from {BEST} contains 0.",
    ]
    no_examples = [
        c.key
        for c in columns
        if not any(r.entries[c.key].examples_level for r in rows if c.key in r.entries)
    ]
    if no_examples:
        notes.append(
            "No test-example level (no interval recorded; seeds only): "
            + ", ".join(no_examples)
            + "."
        )
    for ranking in ranked:
        notes.append(
            f"ranking, {ranking['model']}, {ranking['metric']}: {ranking['text']} (`<`: the "
            f"difference's bootstrap interval excludes 0; {ranking['told_apart']} of "
            f"{ranking['pairs']} pairs told apart, {ranking['same_order_every_seed']} in the "
            "same order in every seed)"
        )
    for row in rows:
        for cell, error in row.failed.items():
            notes.append(f"failed: {cell}: {error}")
        for key, entry in row.entries.items():
            for line in entry.published:
                notes.append(
                    f"published beside {row.model} {row.label}, {key.split('/')[0]}: {line}"
                )
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"


def rankings(rows: Sequence[Row], columns: Sequence[Column]) -> list[dict[str, Any]]:
    """Per model and column with two methods or more: the methods least biased first and
    how many of their pairs the seeds and the bootstrap tell apart
    (:mod:`cdsbias.studies.ranking`)."""
    out = []
    for model in dict.fromkeys(r.model for r in rows):
        for column in columns:
            order, pairs = rank_methods(rows, column, model)
            if len(order) < 2:
                continue
            out.append(
                {
                    "model": model,
                    "column": column.key,
                    "metric": column.label,
                    "order": order,
                    "text": ranking_text(order, pairs),
                    "pairs": len(pairs),
                    "told_apart": sum(p.told_apart for p in pairs),
                    "same_order_every_seed": sum(p.seeds_agree == p.seeds for p in pairs),
                    "pair_orders": [dataclasses.asdict(p) for p in pairs],
                }
            )
    return out


def records(rows: Sequence[Row], columns: Sequence[Column]) -> list[dict[str, Any]]:
    """One record per row x column (``table.csv`` and ``table.json``)."""
    out = []
    for row in rows:
        for column in columns:
            entry = row.entries.get(column.key)
            if entry is None:
                continue
            out.append(
                {
                    "model": row.model,
                    "method": row.method,
                    "axis": row.axis,
                    "word_lists": row.word_lists,
                    "column": column.key,
                    "source": column.source,
                    "metric": column.metric.label,
                    "unit": column.metric.unit,
                    "better": column.metric.direction,
                    "n_seeds": entry.n_seeds,
                    "mean": entry.mean,
                    "seed_sd": entry.sd,
                    "ci_low": entry.ci[0],
                    "ci_high": entry.ci[1],
                    "examples_level": entry.examples_level,
                    "change": entry.change,
                    "change_seed_sd": entry.change_sd,
                    "change_ci_low": entry.change_ci[0] if entry.change_ci else None,
                    "change_ci_high": entry.change_ci[1] if entry.change_ci else None,
                    "p": entry.p,
                    "same_as_base": entry.same_as_base,
                    "best": entry.best,
                    "same_as_best": entry.same_as_best,
                    "published": " | ".join(entry.published),
                }
            )
    return out


def csv_text(rows: Sequence[Row], columns: Sequence[Column]) -> str:
    data = records(rows, columns)
    buffer = io.StringIO()
    if data:
        writer = csv.DictWriter(buffer, fieldnames=list(data[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(data)
    return buffer.getvalue()


def json_text(
    spec: Any, rows: Sequence[Row], columns: Sequence[Column], ranked: Sequence[dict[str, Any]]
) -> str:
    document = {
        "study": spec.name,
        "rows": [
            {
                "model": r.model,
                "method": r.method,
                "axis": r.axis,
                "word_lists": r.word_lists,
                "done": [c.id for c in r.done],
                "failed": r.failed,
                "pending": r.pending,
            }
            for r in rows
        ],
        "entries": records(rows, columns),
        "rankings": list(ranked),
    }
    return json.dumps(document, indent=2, sort_keys=True, default=str) + "\n"


def _bias_removed(column: Column, entry: Entry) -> float | None:
    """The change in the metric's better direction (positive: less biased)."""
    if entry.change is None:
        return None
    metric = column.metric
    if metric.better == "closer":
        before = entry.mean - entry.change
        return abs(before - metric.ideal) - abs(entry.mean - metric.ideal)
    return entry.change if metric.better == "higher" else -entry.change


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def heatmap(rows: Sequence[Row], columns: Sequence[Column], path: Path) -> None:
    """Methods x axes of the bias removed (first headline metric of each axis-scoped
    benchmark), one panel per benchmark; unscoped benchmarks are one column each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cdsbias.benchmarks.axis_scope import split_key

    panels: dict[str, dict[str, Column]] = {}
    for column in columns:
        if column.source == "heldout" or column.source.startswith("downstream:"):
            continue
        name, axis = split_key(column.source)
        panels.setdefault(name, {}).setdefault(axis or "-", column)
    methods = [r for r in rows if r.method != BASE]
    fig, axes = plt.subplots(
        1,
        max(len(panels), 1),
        figsize=(  # each panel wide enough for its title, each axis a column
            max(len(panels), 1) * (4.0 + 1.2 * max((len(a) for a in panels.values()), default=1)),
            1.6 + 0.45 * max(len(methods), 1),
        ),
        squeeze=False,
    )
    for axis, (name, by_axis) in zip(axes[0], panels.items()):
        grid = [
            [
                _bias_removed(c, r.entries[c.key]) if c.key in r.entries else None
                for c in by_axis.values()
            ]
            for r in methods
        ]
        data = [[math.nan if v is None else v for v in line] for line in grid]
        limit = max([abs(v) for line in data for v in line if math.isfinite(v)] or [1.0])
        image = axis.imshow(
            data or [[math.nan]],
            cmap="RdBu",
            vmin=-limit,
            vmax=limit,
            aspect="auto",
            interpolation="nearest",
        )
        axis.set_xticks(range(len(by_axis)), list(by_axis))
        axis.set_yticks(range(len(methods)), [r.label for r in methods])
        for i, line in enumerate(data):
            for j, value in enumerate(line):
                if math.isfinite(value):
                    axis.text(j, i, f"{value:+.3g}", ha="center", va="center", fontsize=8)
        first = next(iter(by_axis.values())).metric
        axis.set_title(
            f"{name}: {first.label}\nbias removed ({first.unit}; + is less biased)", fontsize=9
        )
        fig.colorbar(image, ax=axis)
    _save(fig, path)


def pareto(rows: Sequence[Row], columns: Sequence[Column], path: Path) -> None:
    """Bias removed (the first benchmark column) against the held-out loss change, one
    point per method row, with seed-SD error bars on both."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bias = next(
        (c for c in columns if c.source != "heldout" and not c.source.startswith("downstream:")),
        None,
    )
    loss = next((c for c in columns if c.source == "heldout"), None)
    fig, axis = plt.subplots(figsize=(6.5, 4.5))
    if bias is not None and loss is not None:
        for row in rows:
            if row.method == BASE or bias.key not in row.entries or loss.key not in row.entries:
                continue
            b, l_ = row.entries[bias.key], row.entries[loss.key]
            x, y = l_.change, _bias_removed(bias, b)
            if x is None or y is None:
                continue
            # Error bars: the seed SD of each change (none with one seed).
            axis.errorbar(
                x, y, xerr=l_.change_sd or 0.0, yerr=b.change_sd or 0.0, fmt="o", capsize=3
            )
            axis.annotate(row.label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
        axis.set_xlabel(f"held-out MLM loss change ({loss.metric.unit}; lower is better)")
        axis.set_ylabel(
            f"bias removed ({bias.metric.unit})\n{bias.source}: {bias.metric.label}", fontsize=8
        )
    axis.axhline(0, color="grey", linewidth=0.8)
    axis.axvline(0, color="grey", linewidth=0.8)
    axis.set_title("bias removed vs cost (error bars: seed SD)")
    _save(fig, path)


def log_wandb(spec: Any, rows: Sequence[Row], columns: Sequence[Column], study: Path) -> str | None:
    """Logs the table as a W&B Table in a run of the study's group (offline without a
    key); returns W&B's mode."""
    import wandb

    from cdsbias.train.tracking import configure_tracking

    saved = dict(os.environ)
    try:  # W&B's mode and folder for this run only, not for the rest of the process
        mode = configure_tracking(["wandb"], study)
        data = records(rows, columns)
        names = list(data[0]) if data else ["model"]
        run = wandb.init(
            group=spec.name,
            job_type="study-table",
            name=f"{spec.name}/table",
            dir=str(study),
            reinit="finish_previous",
        )
        table = wandb.Table(columns=names, data=[[r[n] for n in names] for r in data])
        run.log({"study_table": table})
        run.finish()
    finally:
        # W&B keeps its settings (the run folder among them) in a process-wide singleton;
        # a later run in this process (a Trainer's) must start from its own environment.
        wandb.teardown()
        os.environ.clear()
        os.environ.update(saved)
    return mode


def write_table(spec: Any, rows: Sequence[Row], columns: Sequence[Column], study: Path) -> Path:
    """Writes every file of :data:`FILES` into ``STUDY/table``; returns the folder."""
    out = Path(study) / TABLE_DIR
    out.mkdir(parents=True, exist_ok=True)
    ranked = rankings(rows, columns)
    atomic_write_text(out / "table.md", markdown(spec, rows, columns, ranked))
    atomic_write_text(out / "table.csv", csv_text(rows, columns))
    atomic_write_text(out / "table.json", json_text(spec, rows, columns, ranked))
    heatmap(rows, columns, out / "heatmap.png")
    pareto(rows, columns, out / "pareto.png")
    return out
