"""Statistics for bias scores, on top of :mod:`scipy.stats`.

Bias benchmarks produce many rows that are *not* independent: BEC-Pro's 5,400 rows share
~960 distinct sentences, 60 professions and 18 person words. Row-level tests (the paired
Wilcoxon of Bartl et al. 2020) therefore overstate significance; they are kept for
comparability with the paper, while verdicts rest on effect sizes, signs and tests whose
unit is the profession (:func:`permutation_gap_test`, :func:`bootstrap_mean_ci` over
per-profession gaps).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class MeanCI:
    """A mean with its bootstrap confidence interval."""

    mean: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 5000,
    seed: int = 0,
) -> MeanCI:
    """Mean of ``values`` with a bootstrap confidence interval (BCa, :func:`scipy.stats.bootstrap`).

    BCa is undefined for constant or two-valued degenerate samples; those fall back to the
    percentile interval (and a constant sample has the zero-width interval ``[v, v]``).

    Args:
        values: The sample.
        confidence: Confidence level.
        n_resamples: Bootstrap resamples.
        seed: Seed of the resampling, so reports are reproducible.

    Returns:
        The mean, the interval and the sample size (NaNs for an empty sample).
    """
    data = np.asarray(values, dtype=np.float64)
    n = int(data.size)
    if n == 0:
        return MeanCI(math.nan, math.nan, math.nan, 0)
    mean = float(data.mean())
    if n == 1 or np.all(data == data[0]):
        return MeanCI(mean, mean, mean, n)
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = stats.bootstrap(
                (data,),
                np.mean,
                confidence_level=confidence,
                n_resamples=n_resamples,
                method=method,
                random_state=np.random.default_rng(seed),
                vectorized=True,
            )
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return MeanCI(mean, float(low), float(high), n)
    return MeanCI(mean, math.nan, math.nan, n)


@dataclass(frozen=True)
class WilcoxonResult:
    """Paired Wilcoxon signed-rank test with the effect size r = Z / sqrt(N)."""

    statistic: float
    p_value: float
    z: float
    r: float
    n: int
    mean_difference: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def paired_wilcoxon(x: Sequence[float], y: Sequence[float]) -> WilcoxonResult:
    """Two-sided paired Wilcoxon signed-rank test of ``x`` against ``y``.

    Uses the normal approximation (``method="approx"``) so that the Z statistic exists;
    zero differences are dropped (Wilcoxon's convention). The effect size is
    ``r = Z / sqrt(N)`` with N the number of pairs (Rosenthal 1994; the convention of
    Bartl et al. 2020, whose code divides by the number of rows per group).
    Z is signed: positive when ``x`` tends to exceed ``y``.

    Returns:
        Statistic, p-value, signed Z, r, N and the mean of ``x - y``. A sample whose
        differences are all zero gives p = 1 and Z = r = 0.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.size} vs {b.size}")
    n = int(a.size)
    diff = a - b
    mean_difference = float(diff.mean()) if n else math.nan
    if n == 0:
        return WilcoxonResult(math.nan, math.nan, math.nan, math.nan, 0, math.nan)
    if np.all(diff == 0):
        return WilcoxonResult(0.0, 1.0, 0.0, 0.0, n, 0.0)
    two_sided = stats.wilcoxon(a, b, method="approx", alternative="two-sided")
    # The one-sided call's statistic is the sum of positive ranks, so its Z carries the sign.
    z = float(stats.wilcoxon(a, b, method="approx", alternative="greater").zstatistic)
    return WilcoxonResult(
        float(two_sided.statistic), float(two_sided.pvalue), z, z / math.sqrt(n), n, mean_difference
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values (Holm 1979), in the input order.

    ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))`` over the sorted p-values;
    NaNs are left out of m and stay NaN.
    """
    p = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    m = finite.size
    running = 0.0
    for rank, index in enumerate(finite[np.argsort(p[finite], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


@dataclass(frozen=True)
class PermutationResult:
    """A two-sample permutation test of a difference of means."""

    statistic: float
    p_value: float
    n_a: int
    n_b: int
    n_resamples: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def permutation_gap_test(
    gaps_a: Sequence[float],
    gaps_b: Sequence[float],
    *,
    n_resamples: int = 9999,
    seed: int = 0,
) -> PermutationResult:
    """Permutation test with the profession as the unit.

    Statistic: ``mean(gaps_a) - mean(gaps_b)``, where each value is one profession's gap
    (mean association of male minus female person words). The group labels (e.g.
    statistically male vs female professions) are permuted across professions
    (:func:`scipy.stats.permutation_test`, ``permutation_type="independent"``, two-sided;
    exact when the number of distinct relabelings is at most ``n_resamples``).
    """
    a = np.asarray(gaps_a, dtype=np.float64)
    b = np.asarray(gaps_b, dtype=np.float64)
    if a.size == 0 or b.size == 0:
        return PermutationResult(math.nan, math.nan, int(a.size), int(b.size), 0)
    observed = float(a.mean() - b.mean())
    if a.size < 2 or b.size < 2:  # too few professions to permute meaningfully
        return PermutationResult(observed, math.nan, int(a.size), int(b.size), 0)
    if np.all(np.concatenate([a, b]) == a[0]):
        return PermutationResult(observed, 1.0, int(a.size), int(b.size), 0)
    result = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    return PermutationResult(observed, float(result.pvalue), int(a.size), int(b.size), n_resamples)
