"""``cdsbias compare``: training runs side by side, what each method bought and what it cost.

The runs are read by :mod:`cdsbias.runs.summaries` and written as one table (``comparison.md``,
``comparison.csv``) and a trade-off plot (``tradeoff.png``): bias reduction against
held-out MLM loss increase, one labelled point per run. Runs that measured several bias
axes add the cross-axis matrix (:mod:`cdsbias.runs.axes_matrix`): methods x axes, one table
per benchmark scored per axis.
"""

from __future__ import annotations

import csv
import io
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cdsbias.benchmarks.results import table_cell
from cdsbias.io import atomic_path, atomic_write_text
from cdsbias.runs.axes_matrix import matrix_markdown
from cdsbias.runs.downstream_results import compare_markdown, csv_columns
from cdsbias.runs.summaries import (
    MetricChange,
    RunSummary,
    choose_metric,
    cost_columns,
    metric_columns,
    read_runs,
)

MARKDOWN_FILE = "comparison.md"
CSV_FILE = "comparison.csv"
PLOT_FILE = "tradeoff.png"
HELDOUT_LABEL = "held-out MLM loss (original text)"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{seconds:.0f} s"


def _parameters_text(run: RunSummary) -> str:
    if run.trainable_parameters is None:
        return "n/a"
    text = f"{run.trainable_parameters:,}"
    if run.total_parameters:
        text += f" ({100 * run.trainable_parameters / run.total_parameters:.3g}%)"
    return text


def markdown_table(runs: Sequence[RunSummary], plotted: MetricChange | None = None) -> str:
    """The comparison as a markdown table with notes on how to read it."""
    columns, costs = metric_columns(runs), cost_columns(runs)
    header = ["run", "method", "trainable parameters", "wall time", *costs]
    header += [f"{c.benchmark}: {c.metric.label} ({c.metric.unit}; {c.metric.direction})"
               for c in columns]  # fmt: skip
    header.append(HELDOUT_LABEL)
    lines = ["| " + " | ".join(map(table_cell, header)) + " |", "|" + "---|" * len(header)]
    for run in runs:
        wall = "n/a" if run.wall_time is None else _duration(run.wall_time)
        wall = ("≈ " if run.wall_time_source == "file times" else "") + wall
        cells = [run.label, run.method, _parameters_text(run), wall + (" †" if run.resumed else "")]
        cells += [run.costs.get(name, "none") for name in costs]
        cells += [run.metrics[c.column].cell if c.column in run.metrics else "" for c in columns]
        if run.heldout_loss is None:
            cells.append("n/a")
        else:
            before, after = run.heldout_loss
            increase = run.heldout_increase
            change = "n/a" if increase is None else f"{increase:+.1%}"
            cells.append(f"{before:.4f} → {after:.4f} ({change})")
        lines.append("| " + " | ".join(map(table_cell, cells)) + " |")
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in _notes(runs, plotted)) + "\n"


def _notes(runs: Sequence[RunSummary], plotted: MetricChange | None) -> list[str]:
    steps = ", ".join(
        f"{r.label} {r.first_step} → {r.last_step}" + (" + post-hoc" if r.last_posthoc else "")
        for r in runs
    )
    notes = [
        f'Before → after is the first → last evaluated step ({steps}). "better"/"worse" is '
        'the relative change in each metric\'s own direction (for "closer to …" metrics, of '
        "the distance to that value); the held-out loss change is relative to its start."
    ]
    if plotted is not None:
        notes.append(f"{PLOT_FILE} plots the reduction of {plotted.column} "
                     f"({plotted.metric.label}) against the held-out loss increase.")  # fmt: skip
    every = [c.column for c in metric_columns(runs)]
    gaps = [f"{r.label} lacks {', '.join(c for c in every if c not in r.metrics)}"
            for r in runs if len(r.metrics) < len(every)]  # fmt: skip
    if gaps:
        notes.append("The runs were scored on different metrics; blank cells are metrics a run "
                     f"did not record ({'; '.join(gaps)}).")  # fmt: skip
    if any(r.last_posthoc for r in runs):
        notes.append("+ post-hoc: the last point scored the model after its post-hoc method "
                     "acted (after training, or instead of it when nothing trained).")  # fmt: skip
    if any(r.parameters_source == "weights" for r in runs):
        notes.append(
            "Runs without a method record in run_info.json trained every parameter of "
            "their saved weights: all of them count as trainable."
        )
    if any(r.wall_time_source == "file times" for r in runs):
        notes.append("≈ wall time from file times: recipe.yaml (training starts) to the last "
                     "write of bias_metrics.jsonl, bias evaluations included.")  # fmt: skip
    if any(r.resumed for r in runs):
        notes.append("† resumed run: its wall time covers only the last segment (earlier "
                     "segments' time is not recorded in the run folder).")  # fmt: skip
    return notes


def csv_text(runs: Sequence[RunSummary]) -> str:
    """The comparison as CSV: one row per run, raw numbers, blanks where a value is missing."""
    columns, costs = metric_columns(runs), cost_columns(runs)
    header = ["run", "folder", "method", "methods", "trainable_parameters",
              "total_parameters", "parameters_source", "wall_time_s", "wall_time_source",
              "resumed", "first_step", "last_step", *costs]  # fmt: skip
    for column in columns:
        header += [f"{column.column}/{part}" for part in ("before", "after", "reduction_pct")]
    header += ["heldout_loss_before", "heldout_loss_after", "heldout_loss_increase_pct"]
    downstream = sorted({key for run in runs for key in csv_columns(run)})
    header += downstream
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for run in runs:
        row: list[Any] = [run.label, str(run.folder), run.method, "+".join(run.methods),
                          run.trainable_parameters, run.total_parameters, run.parameters_source,
                          run.wall_time, run.wall_time_source, run.resumed, run.first_step,
                          run.last_step]  # fmt: skip
        row += [run.costs.get(name) for name in costs]
        for column in columns:
            change = run.metrics.get(column.column)
            row += [None] * 3 if change is None else [change.before, change.after,
                                                      _percent(change.reduction)]  # fmt: skip
        row += [*(run.heldout_loss or (None, None)), _percent(run.heldout_increase)]
        extrinsic = csv_columns(run)
        row += [extrinsic.get(key) for key in downstream]
        writer.writerow(["" if v is None else v for v in row])
    return buffer.getvalue()


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else 100 * fraction


# --------------------------------------------------------------------------- the plot
def draw_tradeoff(runs: Sequence[RunSummary], plotted: MetricChange, path: Path) -> list[str]:
    """Bias reduction vs held-out loss increase, one labelled point per run.

    Returns:
        The labels of runs left out because they lack the metric or the held-out loss.
    """
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend

    fig = Figure(figsize=(7, 5))
    axis = fig.subplots()
    skipped = []
    for run in runs:
        change = run.metrics.get(plotted.column)
        reduction = None if change is None else change.reduction
        if reduction is None or run.heldout_increase is None:
            skipped.append(run.label)
            continue
        x, y = 100 * run.heldout_increase, 100 * reduction
        axis.scatter([x], [y], s=36, zorder=3)
        axis.annotate(run.label, (x, y), xytext=(5, 5), textcoords="offset points", fontsize=8)
    if len(skipped) == len(runs):
        axis.text(0.5, 0.5, "no run has both values", ha="center", transform=axis.transAxes)
    axis.axhline(0.0, color="grey", linewidth=0.8)
    axis.axvline(0.0, color="grey", linewidth=0.8)
    axis.set_xlabel("held-out MLM loss increase (%) — left is better (less cost)")
    axis.set_ylabel(f"bias reduction (%) — up is better\n{plotted.benchmark}: "
                    f"{plotted.metric.label}")  # fmt: skip
    axis.set_title("bias reduction vs held-out loss increase")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    return skipped


def compare(
    folders: Sequence[str | Path], out: str | Path | None = None, metric: str | None = None
) -> str:
    """Reads the runs, writes ``comparison.md``, ``comparison.csv``, ``tradeoff.png`` to ``out``.

    Args:
        folders: ``train.py`` output folders.
        out: Where to write the three files (nothing is written when ``None``).
        metric: ``NAME/KEY`` of the headline metric to plot (default: the first one).

    Returns:
        The markdown table.
    """
    runs = read_runs(folders)
    plotted = choose_metric(metric_columns(runs), metric)
    table = markdown_table(runs, plotted if out is not None else None)
    matrix = matrix_markdown([(r.label, r.method, r.debiased_for, r.axis_changes) for r in runs])
    table += ("\n" + matrix if matrix else "") + compare_markdown(runs)
    if out is not None:
        out = Path(out)
        atomic_write_text(out / MARKDOWN_FILE, table)
        atomic_write_text(out / CSV_FILE, csv_text(runs))
        skipped = draw_tradeoff(runs, plotted, out / PLOT_FILE)
        if skipped:
            warnings.warn(f"{PLOT_FILE} leaves out {', '.join(skipped)}: no {plotted.column} "
                          "reduction or no held-out loss change", stacklevel=2)  # fmt: skip
    return table
