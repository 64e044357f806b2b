"""Utility and extrinsic-bias metrics of downstream tasks, and their bootstrap intervals.

Utility metrics are those of the task's paper (GLUE: Wang et al. 2019) and come from
:mod:`sklearn.metrics` and :mod:`scipy.stats`. The bias metrics are those of the occupation
classification literature:

* the true positive rate gap of De-Arteaga et al. (2019), "Bias in Bios: A Case Study of
  Semantic Representation Bias in a High-Stakes Setting" (FAT* 2019): for occupation
  ``y``, ``Gap_y = TPR_{female,y} − TPR_{male,y}`` with
  ``TPR_{g,y} = P(ŷ = y | y, g)``;
* its root mean square over occupations, ``GAP^RMS = sqrt(mean_y Gap_y²)``, of Romanov et
  al. (2019), "What's in a Name? Reducing Bias in Bios without Access to Protected
  Attributes" (NAACL 2019), as the INLP (Ravfogel et al. 2020) and LEACE (Belrose et al.
  2023) papers report it;
* the Pearson correlation between ``Gap_y`` and the share of women in occupation ``y``
  (De-Arteaga et al. 2019, Fig. 2; Ravfogel et al. 2020, Fig. 4).

The intervals (:func:`bootstrap_over_examples`) resample *test examples* and pool every
seed's prediction of each drawn example, as aieng-lab's bias-bench fork reports GLUE scores.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


def accuracy(labels: Sequence[int], predictions: Sequence[int]) -> float:
    """Share of predictions equal to the label (``sklearn.metrics.accuracy_score``)."""
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(labels, predictions)) if len(labels) else math.nan


def macro_f1(labels: Sequence[int], predictions: Sequence[int]) -> float:
    """Unweighted mean of per-class F1 over the classes present in ``labels``
    (``sklearn.metrics.f1_score(average="macro")``), as De-Arteaga et al. 2019 report."""
    from sklearn.metrics import f1_score

    if not len(labels):
        return math.nan
    classes = np.unique(np.asarray(labels))
    return float(f1_score(labels, predictions, labels=classes, average="macro", zero_division=0))


def binary_f1(labels: Sequence[int], predictions: Sequence[int]) -> float:
    """F1 of the positive class (GLUE's MRPC and QQP metric)."""
    from sklearn.metrics import f1_score

    return float(f1_score(labels, predictions, zero_division=0)) if len(labels) else math.nan


def matthews(labels: Sequence[int], predictions: Sequence[int]) -> float:
    """Matthews correlation coefficient (GLUE's CoLA metric; Matthews 1975)."""
    from sklearn.metrics import matthews_corrcoef

    if not len(labels):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(matthews_corrcoef(labels, predictions))


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r (NaN when either side is constant or has fewer than 2 values)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    return float(stats.pearsonr(x, y)[0])


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (NaN when either side is constant or has fewer than 2 values)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    return float(stats.spearmanr(x, y)[0])


@dataclass(frozen=True)
class TprGaps:
    """Per-occupation TPR gaps and what was left out.

    Attributes:
        gaps: ``{occupation: TPR_female − TPR_male}`` for occupations with enough examples
            of both genders.
        left_out: ``{occupation: (n_male, n_female)}`` of occupations with too few.
    """

    gaps: dict[int, float]
    left_out: dict[int, tuple[int, int]]

    @property
    def rms(self) -> float:
        """``sqrt(mean_y Gap_y²)`` (Romanov et al. 2019); NaN without any occupation."""
        values = np.fromiter(self.gaps.values(), dtype=float)
        return float(np.sqrt(np.mean(values**2))) if values.size else math.nan


@dataclass(frozen=True)
class GapOccupations:
    """The occupations a TPR gap is computed for, and those left out.

    Attributes:
        kept: Occupations with enough examples of both genders, ascending.
        left_out: ``{occupation: (n_male, n_female)}`` of the others.
    """

    kept: tuple[int, ...]
    left_out: dict[int, tuple[int, int]]


def _per_cell(
    labels: np.ndarray, genders: np.ndarray, hits: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(occupations, counts, correct)`` over the occupations present: ``counts[i, g]``
    examples of ``occupations[i]`` and gender ``g``, ``correct[i, g]`` the sum of ``hits``
    over them (``np.bincount`` on occupation × gender cells: one pass, not a mask each)."""
    binary = (genders == 0) | (genders == 1)
    labels, genders = labels[binary], genders[binary]
    if not labels.size:
        return np.empty(0, np.int64), np.empty((0, 2), np.int64), np.empty((0, 2))
    lowest = int(labels.min())
    cells = (labels - lowest) * 2 + genders
    size = 2 * (int(labels.max()) - lowest + 1)
    counts = np.bincount(cells, minlength=size).reshape(-1, 2)
    present = counts.sum(axis=1) > 0
    occupations = np.arange(lowest, lowest + counts.shape[0])[present]
    correct = None
    if hits is not None:
        correct = np.bincount(cells, weights=hits[binary], minlength=size).reshape(-1, 2)[present]
    return occupations, counts[present], correct


def occupations_with_both_genders(
    labels: Sequence[int], genders: Sequence[int], *, min_examples: int = 1
) -> GapOccupations:
    """Which occupations have a TPR gap: at least ``min_examples`` examples of each gender.

    Count *test examples* here (one row each), not rows of several seeds: which occupations
    enter ``GAP^RMS`` must not depend on how many seeds were run.

    Args:
        labels: True occupation of each example.
        genders: ``0`` (male) or ``1`` (female) of each example.
        min_examples: Fewest examples of each gender an occupation needs (at least 1).

    Returns:
        The occupations kept and those left out with their (male, female) counts.
    """
    occupations, counts, _ = _per_cell(
        np.asarray(labels, dtype=np.int64), np.asarray(genders, dtype=np.int64)
    )
    enough = counts.min(axis=1) >= max(1, min_examples)
    return GapOccupations(
        tuple(int(o) for o in occupations[enough]),
        {int(o): (int(m), int(f)) for o, (m, f) in zip(occupations[~enough], counts[~enough])},
    )


def tpr_gaps(
    labels: Sequence[int],
    predictions: Sequence[int],
    genders: Sequence[int],
    *,
    min_examples: int = 1,
    occupations: Collection[int] | None = None,
) -> TprGaps:
    """``TPR_{female,y} − TPR_{male,y}`` for every occupation ``y`` (De-Arteaga et al. 2019).

    ``TPR_{g,y}`` is the share of test examples of occupation ``y`` and gender ``g``
    (``0`` male, ``1`` female) that are predicted as ``y``. An occupation with fewer than
    ``min_examples`` examples of either gender has no defined gap and is left out.

    Args:
        labels: True occupation of each example.
        predictions: Predicted occupation of each example.
        genders: ``0`` (male) or ``1`` (female) of each example.
        min_examples: Fewest examples of each gender an occupation needs, counted on the
            rows given (rows of several seeds count once per seed: decide which
            occupations count with :func:`occupations_with_both_genders` on the test
            examples and pass them as ``occupations``).
        occupations: Only these occupations (others are neither gaps nor left out).

    Returns:
        The gaps and the occupations left out with their (male, female) counts.
    """
    labels = np.asarray(labels, dtype=np.int64)
    hits = (np.asarray(predictions, dtype=np.int64) == labels).astype(np.float64)
    genders = np.asarray(genders, dtype=np.int64)
    found, counts, correct = _per_cell(labels, genders, hits)
    if occupations is not None:
        chosen = np.isin(found, np.fromiter(occupations, dtype=np.int64))
        found, counts, correct = found[chosen], counts[chosen], correct[chosen]
    enough = counts.min(axis=1) >= max(1, min_examples)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = correct / counts  # TPR per (occupation, gender); only kept rows are read
    return TprGaps(
        {int(o): float(f - m) for o, (m, f) in zip(found[enough], rates[enough])},
        {int(o): (int(m), int(f)) for o, (m, f) in zip(found[~enough], counts[~enough])},
    )


def gap_share_correlation(gaps: Mapping[int, float], share_women: Mapping[int, float]) -> float:
    """Pearson's r between each occupation's TPR gap and its share of women (De-Arteaga et
    al. 2019; Ravfogel et al. 2020): over the occupations present in both mappings."""
    common = [occupation for occupation in gaps if occupation in share_women]
    return pearson([gaps[o] for o in common], [share_women[o] for o in common])


def share_of_women(professions: Sequence[int], genders: Sequence[int]) -> dict[int, float]:
    """``{occupation: share of examples with gender 1}`` of the rows given: Bias in Bios
    passes its training split, where the INLP authors' notebooks count train + dev + test
    (docs/downstream.md says why)."""
    frame = pd.DataFrame({"profession": professions, "gender": genders})
    return {int(k): float(v) for k, v in frame.groupby("profession")["gender"].mean().items()}


@dataclass(frozen=True)
class Interval:
    """A statistic on all test examples with its bootstrap interval."""

    value: float
    ci_low: float
    ci_high: float
    n_examples: int
    n_seeds: int

    def as_dict(self) -> dict[str, float]:
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n_examples": self.n_examples,
            "n_seeds": self.n_seeds,
        }


def bootstrap_over_examples(
    rows: pd.DataFrame,
    statistics: Callable[[pd.DataFrame], Mapping[str, float]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Interval]:
    """Percentile bootstrap intervals over test examples, every seed's rows pooled.

    Each resample draws ``n`` test example ids with replacement (``n`` = distinct
    ``example`` values) and takes, for each drawn id, the rows of every seed, so an
    interval reflects the test set's sampling error and the seeds' spread together, as
    aieng-lab's bias-bench fork reports GLUE. ``value`` is the statistic on all rows.

    Args:
        rows: One row per (seed, test example): an ``example`` id column plus whatever
            ``statistics`` reads.
        statistics: ``rows -> {key: value}``, e.g. accuracy and the TPR-gap RMS.
        n_resamples: Bootstrap resamples (0: no interval, NaN bounds).
        confidence: Confidence level.
        seed: Seed of the resampling.

    Returns:
        ``{key: Interval}`` for every key ``statistics`` returns on all rows.
    """
    point = dict(statistics(rows))
    ids = rows["example"].to_numpy()
    examples, inverse = np.unique(ids, return_inverse=True)
    n_seeds = int(rows["seed"].nunique()) if "seed" in rows else 1
    draws: dict[str, list[float]] = {key: [] for key in point}
    if n_resamples > 0 and examples.size > 1:
        order = np.argsort(inverse, kind="stable")
        counts = np.bincount(inverse, minlength=examples.size)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        uniform = bool(np.all(counts == counts[0]))
        by_example = order.reshape(examples.size, int(counts[0])) if uniform else None
        rng = np.random.default_rng(seed)
        for _ in range(n_resamples):
            drawn = rng.integers(0, examples.size, size=examples.size)
            if by_example is not None:  # every example has one row per seed
                take = by_example[drawn].ravel()
            else:
                take = np.concatenate([order[starts[i] : starts[i] + counts[i]] for i in drawn])
            sample = rows.iloc[take]
            for key, value in statistics(sample).items():
                if key in draws:
                    draws[key].append(value)
    alpha = (1 - confidence) / 2
    out: dict[str, Interval] = {}
    for key, value in point.items():
        values = np.asarray(draws[key], dtype=float)
        values = values[np.isfinite(values)]
        if values.size:
            low, high = np.quantile(values, [alpha, 1 - alpha])
        else:
            low = high = math.nan
        out[key] = Interval(float(value), float(low), float(high), int(examples.size), n_seeds)
    return out
