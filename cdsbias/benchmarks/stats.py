"""Statistics for bias scores, on top of :mod:`scipy.stats`.

Bias benchmarks produce many rows that are *not* independent: BEC-Pro's 5,400 rows share
~960 distinct sentences, 60 professions and 18 person words. Row-level tests (the paired
Wilcoxon of Bartl et al. 2020) therefore overstate significance; they are kept for
comparability with the paper, while verdicts rest on effect sizes, signs and tests whose
unit is the profession (:func:`permutation_gap_test`, :func:`bootstrap_mean_ci` over
per-profession gaps).
"""

from __future__ import annotations

import itertools
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


# --------------------------------------------------------------------------- WEAT-style tests
def effect_size(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kurita et al.'s WEAT-style effect size of two samples of bias scores.

    ``(mean x - mean y) / (sample std of x and y pooled + 1e-8)`` (``ddof=1``), as
    ``get_effect_size`` of the reference script; NaN when either sample is empty.

    Reference: Keita Kurita, Nidhi Vyas, Ayush Pareek, Alan W Black, Yulia Tsvetkov (2019).
    Measuring Bias in Contextualized Word Representations. GeBNLP @ ACL 2019
    (``keitakurita/contextual_embedding_bias_measure``).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    pooled = np.concatenate([x, y])
    if len(x) == 0 or len(y) == 0 or len(pooled) < 2:
        return float("nan")
    return float((x.mean() - y.mean()) / (pooled.std(ddof=1) + 1e-8))


def permutation_p_value(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    permutations: int = 100_000,
    seed: int = 0,
) -> float:
    """Kurita et al.'s two-sided Monte Carlo permutation test of the mean difference.

    ``p = #{|mean(z[:n]) - mean(z[n:])| > |mean x - mean y|} / permutations`` over random
    shuffles ``z`` of ``x`` and ``y`` pooled (``n = len(x)``); strict ``>`` and no +1, as
    ``exact_mc_perm_test`` of the reference script (whose default is 100,000
    permutations). Vectorised in blocks and seeded. NaN for an empty sample.

    Reference: Kurita et al. (2019), see :func:`effect_size`.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) == 0 or len(y) == 0 or permutations < 1:
        return float("nan")
    pooled = np.concatenate([x, y])
    n = len(x)
    observed = abs(x.mean() - y.mean())
    rng = np.random.default_rng(seed)
    count = done = 0
    block = max(1, min(permutations, 2_000_000 // len(pooled)))
    while done < permutations:
        size = min(block, permutations - done)
        shuffled = rng.permuted(np.broadcast_to(pooled, (size, len(pooled))), axis=1)
        diffs = np.abs(shuffled[:, :n].mean(axis=1) - shuffled[:, n:].mean(axis=1))
        count += int(np.count_nonzero(diffs > observed))
        done += size
    return count / permutations


def weat_effect_size(s_x: np.ndarray, s_y: np.ndarray) -> float:
    """Caliskan et al.'s WEAT effect size of two target sets' associations ``s(w, A, B)``.

    ``(mean_X s - mean_Y s) / std_{w in X u Y} s(w, A, B)`` (``ddof=1``, no epsilon), as
    ``effect_size`` in sent-bias and bias-bench. NaN when a set is empty or all equal.

    Reference: A. Caliskan, J. J. Bryson, A. Narayanan (2017). Semantics derived
    automatically from language corpora contain human-like biases. Science 356(6334).
    """
    s_x, s_y = np.asarray(s_x, dtype=np.float64), np.asarray(s_y, dtype=np.float64)
    pooled = np.concatenate([s_x, s_y])
    if len(s_x) == 0 or len(s_y) == 0 or len(pooled) < 2 or np.all(pooled == pooled[0]):
        return math.nan
    return float((s_x.mean() - s_y.mean()) / pooled.std(ddof=1))


def weat_p_value(
    s_x: np.ndarray, s_y: np.ndarray, *, n_samples: int, seed: int = 0, parametric: bool = False
) -> tuple[float, str]:
    """One-sided permutation p-value of the WEAT statistic, as sent-bias/bias-bench compute it.

    ``P[sum_{x in X_i} s(x) >= sum_{x in X} s(x)]`` over equal-size partitions
    ``(X_i, Y_i)`` of ``X u Y`` (the first sum orders partitions exactly as
    ``s(X_i, Y_i, A, B)`` does, since their total is constant):

    * ``exact``: over all ``C(2n, n)`` partitions when that is at most ``n_samples``;
    * ``sampled``: otherwise, ``(1 + #{X_i of n_samples - 1 shuffles with sum >= observed})
      / n_samples`` (the reference counts the observed split as one hit);
    * ``parametric``: ``norm.sf(s(X, Y), mean, sd)`` of ``n_samples`` shuffled
      ``s(X_i, Y_i) = sum_X_i s - sum_Y_i s`` (sample SD, ``ddof=1``).

    Shuffles use ``numpy.random.default_rng(seed)`` per call, so a test's p does not depend
    on which tests ran before it (the reference seeds numpy once per run).

    Returns:
        ``(p, method)``; ``(nan, "undefined")`` unless both sets have the same size >= 1.
    """
    s_x, s_y = np.asarray(s_x, dtype=np.float64), np.asarray(s_y, dtype=np.float64)
    n = len(s_x)
    if n == 0 or len(s_y) != n or n_samples < 1:
        return math.nan, "undefined"
    pooled = np.concatenate([s_x, s_y])
    observed = float(s_x.sum())
    rng = np.random.default_rng(seed)

    def shuffled_sums(count: int) -> tuple[np.ndarray, np.ndarray]:
        first, second = [], []
        block = max(1, 2_000_000 // len(pooled))
        for start in range(0, count, block):
            size = min(block, count - start)
            rows = rng.permuted(np.broadcast_to(pooled, (size, 2 * n)), axis=1)
            first.append(rows[:, :n].sum(axis=1))
            second.append(rows[:, n:].sum(axis=1))
        return np.concatenate(first or [np.empty(0)]), np.concatenate(second or [np.empty(0)])

    if parametric:
        first, second = shuffled_sums(n_samples)
        samples = first - second
        if len(samples) < 2 or samples.std(ddof=1) == 0:
            return math.nan, "parametric"
        statistic = observed - float(s_y.sum())
        sf = stats.norm.sf(statistic, loc=samples.mean(), scale=samples.std(ddof=1))
        return float(sf), "parametric"
    if math.comb(2 * n, n) <= n_samples:
        combos = np.array(list(itertools.combinations(range(2 * n), n)), dtype=np.int64)
        sums = pooled[combos].sum(axis=1)  # combos[0] is X itself, summed in the same order
        return float(np.count_nonzero(sums >= sums[0]) / len(combos)), "exact"
    first, _ = shuffled_sums(n_samples - 1)
    return float((1 + np.count_nonzero(first >= observed)) / n_samples), "sampled"


# --------------------------------------------------------------------------- log2 ratios
# One NaN policy for every log2 ratio (GenDa Lens' gender effects, ABC's effect and its
# bootstrap): log2(first / second) is NaN unless the ratio first / second is a finite
# number > 0. So NaN when either value is NaN or infinite, when second is 0, when the two
# have opposite signs or first is 0, and when the ratio overflows or underflows. Two
# values of the same sign give a number, negative ones included, as in GenDa Lens.
#
# The reference (GenDa Lens' ``logratio``: ``round(math.log2(x / y), 2)``) instead raises
# a math domain error for a zero or negative ratio, raises ZeroDivisionError for a zero
# denominator given as a Python float (ABC), and gives inf or NaN for one given as a
# numpy float (WinoBias accuracies, read from a pandas frame).


def log2_ratio(first: float, second: float) -> float:
    """``log2(first / second)``; NaN unless ``first / second`` is finite and > 0.

    The gender effect of GenDa Lens (Sloth & Rybner 2023): ``log2(accuracy_pro /
    accuracy_anti)`` for (Da)WinoBias, ``log2(median relative female / median relative
    male)`` for ABC. See the NaN policy above this function.

    Reference: Thea Rolskov Sloth, Astrid Sletten Rybner (2023). GenDa Lens: Quantifying
    Gender Bias in Danish language models (github.com/DaDebias/genda-lens,
    ``lm_tasks/wino_utils.py`` and ``lm_tasks/abc_utils.py``, ``logratio``).
    """
    first, second = float(first), float(second)
    if not (math.isfinite(first) and math.isfinite(second)) or second == 0:
        return math.nan
    ratio = first / second
    if not (math.isfinite(ratio) and ratio > 0):
        return math.nan
    return math.log2(ratio)


def genda_rounded_log2_ratio(first: float, second: float) -> float:
    """GenDa Lens' printed gender effect: ``round(log2(round(first, 2) / round(second, 2)), 2)``.

    The two values are rounded as GenDa Lens rounds them, with numpy (``DataFrame.round(2)``
    of the WinoBias classification report, ``Series.median().round(2)`` of ABC), which
    scales by 100 and rounds half to even: 13/40 = 0.325 becomes exactly 32.5, so 0.32,
    where Python's ``round(0.325, 2)`` looks at the stored value 0.32500000000000001 and
    gives 0.33. The log2 ratio itself is rounded with Python's :func:`round`, as in GenDa
    Lens' ``logratio``. NaN by :func:`log2_ratio`'s policy.

    Reference: GenDa Lens (Sloth & Rybner 2023), see :func:`log2_ratio`.
    """
    return round(log2_ratio(float(np.round(first, 2)), float(np.round(second, 2))), 2)


def bootstrap_log2_ratio_ci(
    female: np.ndarray, male: np.ndarray, n_resamples: int, seed: int
) -> tuple[float, float]:
    """95% percentile bootstrap CI of ABC's ``log2(median(female) / median(male))``.

    Items (ABC triples) are resampled with replacement, female and male relative scores
    together. A resample whose ratio is not finite and > 0 has no log2 ratio (the policy
    of :func:`log2_ratio`); NaN when more than 5% of the resamples have none. GenDa Lens
    reports no interval; this is cdsbias' addition to its ABC effect.
    """
    n = len(female)
    if n == 0 or n_resamples < 1:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    ratios = np.empty(0)
    # Chunks keep the [resamples, n] index matrix small for large data sets.
    for start in range(0, n_resamples, 200):
        index = rng.integers(0, n, size=(min(200, n_resamples - start), n))
        with np.errstate(divide="ignore", invalid="ignore"):
            chunk = np.median(female[index], axis=1) / np.median(male[index], axis=1)
        ratios = np.concatenate([ratios, chunk])
    valid = ratios[np.isfinite(ratios) & (ratios > 0)]
    if len(valid) < 0.95 * n_resamples:
        return math.nan, math.nan
    low, high = np.percentile(np.log2(valid), [2.5, 97.5])
    return float(low), float(high)


def wilson_interval(successes: int, total: int) -> list[float]:
    """Wilson score 95% interval of a proportion, in percent (NaN without data).

    :func:`scipy.stats.binomtest` ``.proportion_ci(method="wilson")`` (exactly 0 or 100 at
    0 or ``total`` successes), scaled to percent like the metric it brackets.
    """
    if total == 0:
        return [math.nan, math.nan]  # binomtest needs at least one trial
    ci = stats.binomtest(successes, total).proportion_ci(confidence_level=0.95, method="wilson")
    return [100 * float(ci.low), 100 * float(ci.high)]


def interval_contains(low: float, high: float, value: float) -> bool:
    """Whether the interval ``[low, high]`` holds ``value``: the score cannot be told from
    ``value`` at the interval's level (a two-sided test at 5% for a 95% interval, by the
    duality of tests and confidence intervals). False when a bound is NaN (no data)."""
    return math.isfinite(low) and math.isfinite(high) and low <= value <= high


def pairwise_mann_whitney(
    groups: dict[str, np.ndarray], threshold: float = 0.05
) -> dict[str, list]:
    """Two-sided Mann-Whitney U tests between every pair of groups, as HolisticBias does.

    The likelihood bias of Smith et al. (2022), ``holistic_bias/src/bias_measurements.py``:
    pairs are ``itertools.combinations`` of the sorted group names; ``U`` is the statistic
    of the first group (``U1 = R1 - n1 (n1 + 1) / 2``); scipy's defaults otherwise
    (two-sided, continuity correction, ``method="auto"``). Where every group has the same
    size the pairs go through one call on stacked arrays (``axis=1``), exactly as the
    reference does: scipy then picks the exact or the asymptotic p-value once for all pairs
    (asymptotic if both sizes exceed 8 or *any* pair has ties). Groups of unequal sizes,
    which the reference's ``np.stack`` cannot take, are tested pair by pair.

    Args:
        groups: Scores per group name (at least two groups for any pair).
        threshold: A pair differs significantly when ``p < threshold`` (the paper: 0.05).

    Returns:
        Columns ``group_0``, ``group_1``, ``n_0``, ``n_1``, ``mann_whitney_u``, ``p_value``,
        ``significant_difference`` (0/1), one entry per pair.
    """
    names = sorted(groups)
    pairs = list(itertools.combinations(names, 2))
    out: dict[str, list] = {"group_0": [a for a, _ in pairs], "group_1": [b for _, b in pairs]}
    out["n_0"] = [len(groups[a]) for a, _ in pairs]
    out["n_1"] = [len(groups[b]) for _, b in pairs]
    if not pairs:
        u_values, p_values = np.zeros(0), np.zeros(0)
    elif len({len(groups[name]) for name in names}) == 1:
        first = np.stack([np.asarray(groups[a], dtype=np.float64) for a, _ in pairs])
        second = np.stack([np.asarray(groups[b], dtype=np.float64) for _, b in pairs])
        u_values, p_values = stats.mannwhitneyu(first, second, axis=1)
    else:
        tests = [stats.mannwhitneyu(groups[a], groups[b]) for a, b in pairs]
        u_values = np.array([t.statistic for t in tests], dtype=np.float64)
        p_values = np.array([t.pvalue for t in tests], dtype=np.float64)
    out["mann_whitney_u"] = [float(u) for u in np.atleast_1d(u_values)]
    out["p_value"] = [float(p) for p in np.atleast_1d(p_values)]
    out["significant_difference"] = [int(p < threshold) for p in out["p_value"]]
    return out
