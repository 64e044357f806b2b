"""cdsbias.benchmarks.stats against scipy and hand-computed values on synthetic data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cdsbias.benchmarks.stats import (
    bootstrap_mean_ci,
    genda_rounded_log2_ratio,
    holm,
    log2_ratio,
    paired_wilcoxon,
    permutation_gap_test,
)


def test_bootstrap_mean_ci_matches_scipy():
    rng = np.random.default_rng(1)
    data = rng.normal(0.4, 1.0, 200)
    ours = bootstrap_mean_ci(data, n_resamples=2000, seed=3)
    theirs = stats.bootstrap(
        (data,), np.mean, n_resamples=2000, method="BCa", random_state=np.random.default_rng(3)
    ).confidence_interval
    assert ours.mean == pytest.approx(data.mean())
    assert (ours.ci_low, ours.ci_high) == pytest.approx((theirs.low, theirs.high))
    assert ours.n == 200


def test_bootstrap_degenerate_samples():
    assert bootstrap_mean_ci([0.5] * 10).as_dict() == {
        "mean": 0.5, "ci_low": 0.5, "ci_high": 0.5, "n": 10,
    }  # fmt: skip
    empty = bootstrap_mean_ci([])
    assert empty.n == 0 and math.isnan(empty.mean)


def test_paired_wilcoxon_matches_scipy_and_effect_size():
    rng = np.random.default_rng(2)
    x = rng.normal(0.3, 1.0, 80)
    y = rng.normal(0.0, 1.0, 80)
    result = paired_wilcoxon(x, y)
    reference = stats.wilcoxon(x, y, method="approx")
    assert result.statistic == reference.statistic
    assert result.p_value == pytest.approx(reference.pvalue)
    # Hand-computed normal approximation of W+ (no ties, no zeros).
    d = x - y
    ranks = stats.rankdata(np.abs(d))
    w_plus = ranks[d > 0].sum()
    n = len(d)
    z = (w_plus - n * (n + 1) / 4) / math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    assert result.z == pytest.approx(z)
    assert result.r == pytest.approx(z / math.sqrt(n))
    assert result.z > 0  # x > y on average: positive sign
    assert paired_wilcoxon(y, x).z == pytest.approx(-z)


def test_paired_wilcoxon_all_zero_differences():
    result = paired_wilcoxon([1.0, 2.0], [1.0, 2.0])
    assert result.p_value == 1.0 and result.r == 0.0


def test_holm_hand_computed():
    # Sorted p: 0.01 (x4) = 0.04, 0.02 (x3) = 0.06, 0.03 (x2) = 0.06 (monotone), 0.5 (x1) = 0.5
    assert holm([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])
    adjusted = holm([0.01, float("nan")])
    assert adjusted[0] == pytest.approx(0.01) and math.isnan(adjusted[1])


def test_permutation_gap_test_exact_small_case():
    a = [1.0, 2.0, 3.0]
    b = [4.0, 5.0, 6.0]
    result = permutation_gap_test(a, b, n_resamples=9999)
    # 20 relabelings; only the observed split and its mirror are as extreme: p = 2/20.
    assert result.statistic == pytest.approx(-3.0)
    assert result.p_value == pytest.approx(0.1)


def test_permutation_gap_test_matches_scipy():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0.2, 1, 20), rng.normal(-0.2, 1, 20)
    ours = permutation_gap_test(a, b, n_resamples=999, seed=5)
    theirs = stats.permutation_test(
        (a, b), lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis), vectorized=True,
        n_resamples=999, random_state=np.random.default_rng(5),
    )  # fmt: skip
    assert ours.p_value == pytest.approx(theirs.pvalue)
    assert ours.statistic == pytest.approx(a.mean() - b.mean())


def test_log2_ratio_nan_policy():
    assert log2_ratio(2.0, 0.5) == 2.0
    assert log2_ratio(0.3, 0.6) == math.log2(0.3 / 0.6)
    # Same sign, both negative: a number, as GenDa Lens' math.log2(x / y) gives.
    assert log2_ratio(-2.0, -1.0) == 1.0
    # No finite positive ratio: NaN (GenDa Lens would raise or return inf/NaN).
    for first, second in [
        (0.0, 0.5), (0.5, 0.0), (0.0, 0.0), (-1.0, 2.0), (1.0, -2.0),
        (math.nan, 1.0), (1.0, math.nan), (math.inf, 1.0), (1.0, math.inf),
        (1e300, 1e-300), (1e-300, 1e300),
    ]:  # fmt: skip
        assert math.isnan(log2_ratio(first, second)), (first, second)


def test_genda_rounding_is_numpy_rounding():
    # GenDa Lens rounds the accuracies with DataFrame.round(2), i.e. numpy: 13/40 = 0.325
    # scales to exactly 32.5 and rounds half to even, to 0.32 (Python's round gives 0.33).
    pro, anti = 13 / 40, 0.5
    assert float(np.round(pro, 2)) == 0.32 and round(pro, 2) == 0.33
    expected = round(math.log2(0.32 / 0.5), 2)
    assert expected == -0.64
    assert genda_rounded_log2_ratio(pro, anti) == expected
    assert genda_rounded_log2_ratio(0.504, 0.251) == round(math.log2(0.5 / 0.25), 2)
    assert math.isnan(genda_rounded_log2_ratio(0.004, 0.5))  # rounds to 0: no ratio
