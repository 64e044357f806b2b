"""Downstream metrics on hand-computed predictions; the bootstrap on known cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cdsbias.downstream.metrics import (
    accuracy,
    bootstrap_over_examples,
    gap_share_correlation,
    macro_f1,
    matthews,
    share_of_women,
    tpr_gaps,
)

# Occupation 0: women 2/2 right, men 1/2 -> gap +0.5; occupation 1: women 1/2, men 2/2 ->
# -0.5; occupation 2: the woman right, the man wrong -> +1.
LABELS = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
GENDERS = [1, 1, 0, 0, 1, 1, 0, 0, 1, 0]
PREDICTIONS = [0, 0, 0, 1, 1, 0, 1, 1, 2, 1]


def test_tpr_gaps_rms_and_correlation_by_hand():
    gaps = tpr_gaps(LABELS, PREDICTIONS, GENDERS)
    assert gaps.gaps == {0: 0.5, 1: -0.5, 2: 1.0}
    assert gaps.left_out == {}
    assert gaps.rms == pytest.approx(math.sqrt((0.25 + 0.25 + 1.0) / 3))
    share = share_of_women(LABELS, GENDERS)
    assert share == {0: 0.5, 1: 0.5, 2: 0.5}
    # Gaps (0.5, -0.5, 1) against shares (0.75, 0.25, 0.5): deviations (1/6, -5/6, 2/3)
    # and (1/4, -1/4, 0); r = (6/24) / sqrt(42/36 * 1/8) = sqrt(3/7).
    r = gap_share_correlation(gaps.gaps, {0: 0.75, 1: 0.25, 2: 0.5})
    assert r == pytest.approx(math.sqrt(3 / 7))


def test_occupations_with_too_few_examples_of_a_gender_are_left_out_and_counted():
    gaps = tpr_gaps(LABELS, PREDICTIONS, GENDERS, min_examples=2)
    assert gaps.gaps == {0: 0.5, 1: -0.5}
    assert gaps.left_out == {2: (1, 1)}
    assert gaps.rms == pytest.approx(0.5)
    empty = tpr_gaps([0, 0], [0, 0], [1, 1])  # no man at all
    assert empty.left_out == {0: (0, 2)} and math.isnan(empty.rms)


def test_utility_metrics_by_hand():
    assert accuracy(LABELS, PREDICTIONS) == pytest.approx(0.7)
    # F1: class 0 P=3/4 R=3/4 -> 3/4; class 1 P=3/5 R=3/4 -> 2/3; class 2 P=1 R=1/2 -> 2/3.
    assert macro_f1(LABELS, PREDICTIONS) == pytest.approx((0.75 + 2 / 3 + 2 / 3) / 3)
    # MCC of a perfect and an inverted binary prediction.
    assert matthews([0, 1, 0, 1], [0, 1, 0, 1]) == pytest.approx(1.0)
    assert matthews([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)


def _accuracy(rows: pd.DataFrame) -> dict[str, float]:
    return {"accuracy": float((rows["label"] == rows["prediction"]).mean())}


def test_bootstrap_interval_matches_the_normal_approximation_of_a_proportion():
    n, p = 2000, 0.8
    correct = np.zeros(n, dtype=int)
    correct[: int(n * p)] = 1
    rows = pd.DataFrame({"example": range(n), "seed": 0, "label": 1, "prediction": correct})
    interval = bootstrap_over_examples(rows, _accuracy, n_resamples=2000, seed=0)["accuracy"]
    half = 1.959964 * math.sqrt(p * (1 - p) / n)  # 0.0175
    assert interval.value == pytest.approx(p)
    assert interval.ci_low == pytest.approx(p - half, abs=0.003)
    assert interval.ci_high == pytest.approx(p + half, abs=0.003)
    assert (interval.n_examples, interval.n_seeds) == (n, 1)


def test_bootstrap_resamples_examples_with_every_seed_pooled():
    rng = np.random.default_rng(1)
    one = pd.DataFrame(
        {"example": range(50), "seed": 0, "label": 1, "prediction": rng.integers(0, 2, 50)}
    )
    # Two seeds with identical predictions: each drawn example brings both rows, so the
    # interval is that of one seed exactly (same draws, same means).
    two = pd.concat([one, one.assign(seed=1)], ignore_index=True)
    a = bootstrap_over_examples(one, _accuracy, n_resamples=300, seed=3)["accuracy"]
    b = bootstrap_over_examples(two, _accuracy, n_resamples=300, seed=3)["accuracy"]
    assert (a.ci_low, a.ci_high, a.value) == (b.ci_low, b.ci_high, b.value)
    assert b.n_seeds == 2 and b.n_examples == 50
    assert a.ci_low < a.value < a.ci_high
    # Every prediction right: the zero-width interval [1, 1].
    perfect = bootstrap_over_examples(one.assign(prediction=1), _accuracy, n_resamples=100)[
        "accuracy"
    ]
    assert (perfect.value, perfect.ci_low, perfect.ci_high) == (1.0, 1.0, 1.0)
    none = bootstrap_over_examples(one, _accuracy, n_resamples=0)["accuracy"]
    assert math.isnan(none.ci_low) and none.value == a.value


def test_bias_sts_b_differences_by_hand():
    from cdsbias.downstream.bias_sts_b import BiasStsb

    task = BiasStsb()
    task.share_women = {"nurse": 0.9, "taper": 0.1, "judge": 0.5}
    # Pairs (man, woman): nurse 2.0 vs 3.0 (-1), taper 4.0 vs 3.5 (+0.5), judge 1 vs 1 (0).
    rows = pd.DataFrame({
        "seed": 0, "example": [0, 0, 1, 1, 2, 2],
        "occupation": ["nurse", "nurse", "taper", "taper", "judge", "judge"],
        "gender": [0, 1, 0, 1, 0, 1], "prediction": [2.0, 3.0, 4.0, 3.5, 1.0, 1.0],
    })  # fmt: skip
    values = task.statistics(rows)
    assert values["mean_abs_diff"] == pytest.approx(1.5 / 3)
    assert values["mean_diff"] == pytest.approx(-0.5 / 3)
    # Differences (-1, 0.5, 0) against shares (0.9, 0.1, 0.5): deviations (-5/6, 2/3, 1/6)
    # and (0.4, -0.4, 0); r = -0.6 / sqrt(7/6 * 0.32) = -0.98198.
    assert values["diff_share_r"] == pytest.approx(-0.6 / math.sqrt(7 / 6 * 0.32))
    # A bootstrap resample drawing the nurse pair twice counts it twice.
    twice = pd.concat([rows.iloc[[0, 1]], rows], ignore_index=True)
    assert task.statistics(twice)["mean_abs_diff"] == pytest.approx(2.5 / 4)
