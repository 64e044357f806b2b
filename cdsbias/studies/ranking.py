"""Does a ranking of methods survive the seeds? Every pair of a model's methods in one
column of a study's table, compared twice:

- **seed by seed**: in how many of the seeds both methods ran did the first come out less
  biased (the same training seed, so the same shuffling and initialisation of new
  parameters);
- **by the two-level bootstrap** of :mod:`cdsbias.studies.stats`: the 95% interval of the
  difference of the two methods' means over seeds, each resampled over its seeds and its
  test examples (independent draws, as ``study table``'s ``≈`` mark against the best
  method). A pair is *told apart* when that interval excludes 0.

"Less biased" is the metric's own direction (:func:`cdsbias.studies.table.badness`: lower,
higher, or closer to the ideal).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cdsbias.studies.spec import BASE
from cdsbias.studies.stats import interval, rng_for
from cdsbias.studies.table import Column, Row, badness


@dataclass(frozen=True)
class PairOrder:
    """Two methods in one column, the less biased (by mean over seeds) first.

    Attributes:
        better: The less biased row's label.
        worse: The other row's label.
        difference: ``badness(worse) − badness(better)`` of the means (≥ 0).
        ci: The two-level bootstrap 95% interval of that difference.
        seeds_agree: Seeds run by both in which ``better`` was less biased.
        seeds: Seeds run by both.
    """

    better: str
    worse: str
    difference: float
    ci: tuple[float, float]
    seeds_agree: int
    seeds: int

    @property
    def told_apart(self) -> bool:
        return self.ci[0] > 0


def rank_methods(
    rows: Sequence[Row],
    column: Column,
    model: str,
    label: Callable[[Row], str] = lambda row: row.label,
) -> tuple[list[str], list[PairOrder]]:
    """``model``'s methods in ``column``, least biased mean first, and every pair of them.

    Args:
        rows: The table's rows, their entries filled
            (:func:`cdsbias.studies.table.study_table`).
        column: The column compared.
        model: The model label whose methods are ranked (base is left out).
        label: What names a row in the result (default ``method (axis)``).

    Returns:
        The rows' labels in order, and the pairs (in that order: each method against every
        one after it).
    """
    metric = column.metric
    scored = [
        (row, row.per_seed[column.key])
        for row in rows
        if row.model == model and row.method != BASE and row.per_seed.get(column.key)
    ]
    means = {id(row): badness(row.seed_values(column.key).mean, metric) for row, _ in scored}
    scored.sort(key=lambda item: means[id(item[0])])
    replicates = {
        id(row): badness(
            row.seed_values(column.key).replicates(
                rng_for("rank", row.model, row.method, row.axis, column.key)
            ),
            metric,
        )
        for row, _ in scored
    }
    pairs = []
    for i, (better, better_seeds) in enumerate(scored):
        for worse, worse_seeds in scored[i + 1 :]:
            shared = sorted(set(better_seeds) & set(worse_seeds))
            agree = sum(
                badness(better_seeds[s][0], metric) < badness(worse_seeds[s][0], metric)
                for s in shared
            )
            pairs.append(
                PairOrder(
                    label(better),
                    label(worse),
                    means[id(worse)] - means[id(better)],
                    interval(replicates[id(worse)] - replicates[id(better)]),
                    agree,
                    len(shared),
                )
            )
    return [label(row) for row, _ in scored], pairs


def neighbours(order: Sequence[str], pairs: Sequence[PairOrder]) -> list[PairOrder]:
    """The pairs of methods next to each other in ``order``."""
    by_pair = {(p.better, p.worse): p for p in pairs}
    return [by_pair[(first, second)] for first, second in itertools.pairwise(order)]


def ranking_text(order: Sequence[str], pairs: Sequence[PairOrder]) -> str:
    """The order with ``<`` between neighbours the bootstrap tells apart and ``≈`` where
    it cannot, e.g. ``a < b ≈ c``."""
    text = order[0] if order else ""
    for pair in neighbours(order, pairs):
        text += f" {'<' if pair.told_apart else '≈'} {pair.worse}"
    return text
