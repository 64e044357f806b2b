"""A run's downstream results (``RUN/downstream/<task>/summary.json``) in compare and cards.

``train.py`` with ``downstream_tasks`` fine-tunes the base model and the final model on each
task after training (``cdsbias downstream``'s folder, one per task). This module reads those
files as data — their ``headline`` says each metric's label, unit and direction — so it
never names a task: the downstream columns of ``cdsbias compare``, the rank correlation of
every intrinsic (benchmark) metric with every extrinsic (downstream) one over the runs
compared, and the model card's "Downstream" section.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Folder of a run that holds ``<task>/summary.json`` (written by ``cdsbias downstream``).
DOWNSTREAM_DIR = "downstream"
DOWNSTREAM_SUMMARY = "summary.json"
#: The roles of the two models a recipe's downstream tasks fine-tune.
BASE_ROLE, FINAL_ROLE = "base", "final"


def read_downstream(folder: str | Path) -> dict[str, dict[str, Any]]:
    """``{task: summary}`` of every ``downstream/<task>/summary.json`` in a run folder."""
    root = Path(folder) / DOWNSTREAM_DIR
    if not root.is_dir():
        return {}
    out = {}
    for path in sorted(root.glob(f"*/{DOWNSTREAM_SUMMARY}")):
        out[path.parent.name] = json.loads(path.read_text(encoding="utf-8"))
    return out


@dataclass(frozen=True)
class ExtrinsicValue:
    """One downstream metric of one model: the pooled value and its bootstrap interval."""

    column: str
    label: str
    better: str
    value: float | None
    ci_low: float | None
    ci_high: float | None

    @property
    def cell(self) -> str:
        if self.value is None:
            return "n/a"
        if self.ci_low is None or self.ci_high is None:
            return f"{self.value:.3f}"
        return f"{self.value:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}]"


def extrinsic_values(
    summaries: Mapping[str, Mapping[str, Any]], role: str = FINAL_ROLE
) -> dict[str, ExtrinsicValue]:
    """``{"task/metric": value}`` of the model with ``role`` (the hook variant of a model
    with a post-hoc projection: the one that keeps it, as bias-bench fine-tunes)."""
    values: dict[str, ExtrinsicValue] = {}
    for task, summary in summaries.items():
        entries = [e for e in summary.get("results", []) if e.get("role") == role]
        if not entries:
            continue
        entry = next((e for e in entries if e.get("variant") == "hook"), entries[0])
        for headline in summary.get("headline", []):
            metric = entry["metrics"].get(headline["key"]) or {}
            column = f"{task}/{headline['key']}"
            values[column] = ExtrinsicValue(
                column, f"{task}: {headline['label']} ({headline['better']} is better)",
                headline["better"], metric.get("value"), metric.get("ci_low"),
                metric.get("ci_high"),
            )  # fmt: skip
    return values


@dataclass(frozen=True)
class RankCorrelation:
    """Spearman's rho between an intrinsic and an extrinsic metric over runs."""

    intrinsic: str
    extrinsic: str
    rho: float
    ci_low: float
    ci_high: float
    n_runs: int


def rank_correlation(
    x: Sequence[float], y: Sequence[float], *, n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Spearman's rho of paired values with a percentile bootstrap interval over the pairs
    (:func:`scipy.stats.spearmanr`; resamples where either side is constant are dropped).
    NaNs when fewer than 3 pairs."""
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan, math.nan, math.nan
    rho = float(stats.spearmanr(x, y)[0])
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_resamples):
        take = rng.integers(0, x.size, size=x.size)
        a, b = x[take], y[take]
        if np.all(a == a[0]) or np.all(b == b[0]):
            continue
        draws.append(stats.spearmanr(a, b)[0])
    if not draws:
        return rho, math.nan, math.nan
    low, high = np.quantile(draws, [0.025, 0.975])
    return rho, float(low), float(high)


def correlations(
    intrinsic: Sequence[Mapping[str, float | None]],
    extrinsic: Sequence[Mapping[str, ExtrinsicValue]],
) -> list[RankCorrelation]:
    """Every (intrinsic, extrinsic) pair of columns over the runs that have both values.

    Args:
        intrinsic: Per run, ``{benchmark column: value after training}``.
        extrinsic: Per run, :func:`extrinsic_values` of its final model.
    """
    names_in = sorted({k for run in intrinsic for k in run})
    names_ex = sorted({k for run in extrinsic for k in run})
    out = []
    for a in names_in:
        for b in names_ex:
            pairs = [
                (run_in[a], run_ex[b].value)
                for run_in, run_ex in zip(intrinsic, extrinsic, strict=True)
                if run_in.get(a) is not None and b in run_ex and run_ex[b].value is not None
            ]
            rho, low, high = rank_correlation([p[0] for p in pairs], [p[1] for p in pairs])
            out.append(RankCorrelation(a, b, rho, low, high, len(pairs)))
    return out


def correlation_markdown(rows: Sequence[RankCorrelation]) -> str:
    """The correlation table of ``cdsbias compare`` (empty without any pair)."""
    if not rows:
        return ""

    def number(value: float) -> str:
        return "n/a" if math.isnan(value) else f"{value:+.2f}"

    lines = [
        "Rank correlation of intrinsic (benchmark, after training) and extrinsic (downstream, "
        "final model) bias over the runs compared: Spearman's rho, 95% bootstrap interval "
        "over runs, n runs (n < 3: n/a).",
        "",
        "| intrinsic | extrinsic | rho | 95% CI | runs |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.intrinsic} | {r.extrinsic} | {number(r.rho)} | "
                     f"[{number(r.ci_low)}, {number(r.ci_high)}] | {r.n_runs} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def card_section(summaries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The model card's "Downstream" section: base vs debiased, seeds and data."""
    if not summaries:
        return []
    lines = ["## Downstream", ""]
    for task, summary in summaries.items():
        data = summary.get("data", {})
        training = summary.get("training", {})
        seeds = summary.get("seeds", [])
        lines += [
            f"### {task}", "",
            f"{summary.get('description', task)}. Each model fine-tuned with {len(seeds)} "
            f"seed(s) ({', '.join(map(str, seeds))}) on {data.get('n_train')} training "
            f"examples of {data.get('data')} (learning rate {training.get('learning_rate')}, "
            f"{training.get('epochs')} epochs, batch {training.get('batch_size')}), scored on "
            f"{data.get('n_test')} test examples; 95% bootstrap intervals over test examples, "
            "seeds pooled.", "",
        ]  # fmt: skip
        headline = summary.get("headline", [])
        header = ["model", "variant", *(f"{h['label']} ({h['better']} is better)"
                                        for h in headline)]  # fmt: skip
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for entry in summary.get("results", []):
            cells = [entry.get("role") or entry["model"], entry["variant"]]
            for h in headline:
                m = entry["metrics"].get(h["key"]) or {}
                value = ExtrinsicValue("", "", "", m.get("value"), m.get("ci_low"),
                                       m.get("ci_high"))  # fmt: skip
                cells.append(value.cell)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def compare_markdown(runs: Sequence[Any]) -> str:
    """``cdsbias compare``'s downstream part: per run the final model's extrinsic metrics
    (base → final), then the rank correlations; empty when no run has downstream results.

    Args:
        runs: :class:`~cdsbias.runs.summaries.RunSummary` of each run compared.
    """
    finals = [extrinsic_values(read_downstream(run.folder)) for run in runs]
    bases = [extrinsic_values(read_downstream(run.folder), BASE_ROLE) for run in runs]
    columns = sorted({c for values in finals for c in values})
    if not columns:
        return ""
    labels = {c: v.label for values in finals for c, v in values.items()}
    lines = [
        "",
        "Downstream (base → final model; 95% bootstrap intervals over test examples, seeds "
        "pooled; a post-hoc projection kept as a hook):",
        "",
        "| run | " + " | ".join(labels[c] for c in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for run, final, base in zip(runs, finals, bases, strict=True):
        cells = []
        for c in columns:
            after = final[c].cell if c in final else ""
            cells.append(f"{base[c].cell} → {after}" if c in base else after)
        lines.append(f"| {run.label} | " + " | ".join(cells) + " |")
    intrinsic = [{k: change.after for k, change in run.metrics.items()} for run in runs]
    table = correlation_markdown(correlations(intrinsic, finals))
    return "\n".join(lines) + "\n\n" + table


def csv_columns(run: Any) -> dict[str, float | None]:
    """``{"downstream:task/metric": value}`` of a run's final model (``comparison.csv``)."""
    values = extrinsic_values(read_downstream(run.folder))
    return {f"downstream:{c}": v.value for c, v in sorted(values.items())}
