"""Known answers for the linear erasures on planted features (three classes, ±c·u)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from cdsbias.errors import CdsbiasError
from cdsbias.methods.erasure import (
    AffineErasure,
    leace_eraser,
    sentence_debias_subspace,
)
from cdsbias.methods.inlp_fit import inlp_projection

D = 48


def planted(
    n: int = 400, c: float = 2.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Male rows +c·u, female rows −c·u, neutral rows 0, plus unit Gaussian noise.

    ``u`` is the same unit vector for every seed; the seed draws the noise.
    """
    u = np.random.default_rng(12345).normal(size=D)
    u /= np.linalg.norm(u)
    rng = np.random.default_rng(seed)
    y = np.repeat([1, 0, -1], n)
    shift = np.select([y == 1, y == 0], [c, -c], 0.0)
    x = rng.normal(size=(3 * n, D)) + shift[:, None] * u
    return x, y, u


def probe_accuracy(train_x, train_y, test_x, test_y) -> float:
    """A fresh logistic probe male-vs-female, scored on held-out rows."""
    from sklearn.linear_model import LogisticRegression

    keep_train, keep_test = train_y >= 0, test_y >= 0
    probe = LogisticRegression(max_iter=2000).fit(train_x[keep_train], train_y[keep_train])
    return float(probe.score(test_x[keep_test], test_y[keep_test]))


def test_inlp_removes_at_most_three_directions_per_iteration_and_kills_the_probe():
    x, y, _ = planted()
    held_x, held_y, _ = planted(seed=1)
    before = probe_accuracy(x, y, held_x, held_y)
    ranks = []
    for iterations in (1, 2, 3):
        erasure = inlp_projection(x, y, iterations=iterations)
        ranks.append(erasure.rank_removed)
        assert len(erasure.dev_accuracy) == iterations
    assert ranks[0] <= 3 and all(b - a <= 3 for a, b in pairwise(ranks))
    erasure = inlp_projection(x, y, iterations=5)
    p = erasure.projection
    np.testing.assert_allclose(p, p.T, atol=1e-12)
    np.testing.assert_allclose(p @ p, p, atol=1e-10)
    assert not erasure.bias.any()
    assert erasure.rank_removed == D - np.linalg.matrix_rank(p)
    after = probe_accuracy(erasure.apply(x), y, erasure.apply(held_x), held_y)
    assert before >= 0.95
    assert after <= 0.60
    # The first classifier sees the planted direction; later ones see little.
    assert erasure.dev_accuracy[0] > 0.6 and erasure.dev_accuracy[-1] < erasure.dev_accuracy[0]


def test_inlp_projection_equals_ben_israel_formula():
    """P = I − P_R(Σ P_R(W_i)) as in Ravfogel et al.'s debias.py, from the same classifiers,
    each trained on features times bias-bench's zero-rate dropout scale 1/(1 − 0 + 1e-6)."""
    from scipy.linalg import orth
    from sklearn.svm import LinearSVC

    from cdsbias.methods.inlp_fit import INLP_CLASSIFIER, inlp_split

    x, y, _ = planted(n=200)
    erasure = inlp_projection(x, y, iterations=3)
    x_train, y_train, _, _ = inlp_split(x, y)
    rowspaces, p, current = [], np.eye(D), x_train
    for _ in range(3):
        w = LinearSVC(**INLP_CLASSIFIER).fit(current * (1.0 / (1 - 0 + 1e-6)), y_train).coef_
        basis = orth(w.T)
        rowspaces.append(basis @ basis.T)
        q = orth(np.sum(rowspaces, axis=0))
        p = np.eye(D) - q @ q.T
        current = (p @ x_train.T).T
    np.testing.assert_allclose(erasure.projection, p, atol=1e-8)


def test_sentence_debias_recovers_the_planted_direction_sign_invariantly():
    rng = np.random.default_rng(3)
    u = rng.normal(size=D)
    u /= np.linalg.norm(u)
    base = rng.normal(size=(300, D))
    noise = 0.05
    male = base + 0.5 * u + noise * rng.normal(size=base.shape)
    female = base - 0.5 * u + noise * rng.normal(size=base.shape)
    erasure = sentence_debias_subspace(male, female)
    v = np.array(erasure.details["components"][0])
    assert abs(v @ u) >= 0.999
    assert v @ u > 0  # points the male way
    swapped = sentence_debias_subspace(female, male)
    np.testing.assert_allclose(swapped.projection, erasure.projection, atol=1e-10)
    flipped = sentence_debias_subspace(base - 0.5 * u, base + 0.5 * u)
    assert abs(np.array(flipped.details["components"][0]) @ u) >= 0.999
    np.testing.assert_allclose(erasure.projection @ v, 0, atol=1e-10)
    assert erasure.rank_removed == 1
    two = sentence_debias_subspace(male, female, k=2)
    assert two.rank_removed == 2 == D - np.linalg.matrix_rank(two.projection)


def test_leace_leaves_equal_class_means():
    x, y, _ = planted()
    erasure = leace_eraser(x, y)
    erased = erasure.apply(x)
    means = np.stack([erased[y == c].mean(axis=0) for c in (1, 0, -1)])
    np.testing.assert_allclose(means - means.mean(axis=0), 0, atol=1e-8)
    assert 1 <= erasure.rank_removed <= 2
    # Affine: the overall mean is kept.
    np.testing.assert_allclose(erased.mean(axis=0), x.mean(axis=0), atol=1e-8)
    held_x, held_y, _ = planted(seed=1)
    assert probe_accuracy(erased, y, erasure.apply(held_x), held_y) <= 0.60


def test_erasure_saves_and_loads(tmp_path):
    x, y, _ = planted(n=100)
    erasure = inlp_projection(x, y, iterations=2)
    erasure.sentences_per_class = {"male": 100, "female": 100, "neutral": 100}
    erasure.save(tmp_path)
    again = AffineErasure.load(tmp_path)
    np.testing.assert_array_equal(again.projection, erasure.projection)
    assert again.record() == erasure.record()
    assert again.record()["rank_removed"] == erasure.rank_removed
    with pytest.raises(CdsbiasError, match="no fitted erasure"):
        AffineErasure.load(tmp_path / "nothing")


def test_bad_input_is_one_line():
    x, y, _ = planted(n=20)
    with pytest.raises(CdsbiasError, match="two classes"):
        inlp_projection(x, np.ones(len(x)), iterations=1)
    with pytest.raises(CdsbiasError, match="labels"):
        leace_eraser(x, y[:-1])
    with pytest.raises(CdsbiasError, match="aligned pairs"):
        sentence_debias_subspace(x[:5], x[:6])
    with pytest.raises(CdsbiasError, match="sentence_debias_components"):
        sentence_debias_subspace(x[:5], x[5:10], k=0)


def test_inlp_warns_when_its_iterations_can_erase_every_direction():
    """Each iteration removes up to one direction per class with three classes (the
    one-vs-rest classifier's 3 rows), one with two. By hand: 80 × 3 = 240 < 768 is silent
    (bias-bench's own setting); on the demo's 128 dimensions 42 × 3 = 126 is silent and
    43 × 3 = 129 warns (the old "classes − 1" count waited until 64); two classes remove
    one a round, so 127 is silent and 128 warns."""
    import warnings

    from transformers import BertConfig, BertForMaskedLM

    from cdsbias.methods import plan_from_values
    from cdsbias.methods.inlp_fit import (
        InlpCapacityWarning,
        directions_per_iteration,
        inlp_capacity,
    )

    assert [directions_per_iteration(k) for k in (2, 3, 4)] == [1, 3, 4]
    assert inlp_capacity(80, 3, 768) is None
    assert inlp_capacity(42, 3, 128) is None  # 126 < 128
    assert inlp_capacity(43, 3, 128) == (
        "inlp_iterations=43 with 3 classes can remove up to 129 directions (3 per iteration, "
        "the rows of its classifier), but the hidden states have only 128: INLP can erase "
        "every direction and leave the MLM head a constant. bias-bench's 80 is for 768 "
        "dimensions; set inlp_iterations lower (e.g. 7, scaled by 128/768)."
    )
    text = inlp_capacity(80, 3, 128)
    assert "up to 240 directions" in text and "only 128" in text
    assert "e.g. 13" in text  # round(80 · 128 / 768); 13 × 3 = 39 < 128
    assert inlp_capacity(10, 3, 30) is not None  # the demo's 10 iterations remove 30
    assert inlp_capacity(127, 2, 128) is None
    assert "up to 128 directions (1 per iteration" in inlp_capacity(128, 2, 128)
    # The suggestion never warns itself: 300 iterations scale to 50, capped at 42 (42 × 3 < 128).
    assert "e.g. 42" in inlp_capacity(300, 3, 128)
    plan = plan_from_values({"posthoc_method": "inlp"})
    small = BertForMaskedLM(BertConfig(vocab_size=30, hidden_size=128, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32))  # fmt: skip
    with pytest.warns(InlpCapacityWarning, match="set inlp_iterations lower"):
        plan.prepare(small)  # before training: nothing fitted or written yet
    with pytest.warns(InlpCapacityWarning, match="up to 129 directions"):
        plan_from_values({"posthoc_method": "inlp", "inlp_iterations": 43}).prepare(small)
    scaled = plan_from_values({"posthoc_method": "inlp", "inlp_iterations": 42})
    with warnings.catch_warnings():
        warnings.simplefilter("error", InlpCapacityWarning)
        scaled.prepare(small)  # 42 × 3 = 126 < 128


def test_inlp_records_the_dimensions_that_remain():
    """D = 48, three classes: 24 iterations × 3 ≥ 48 warns at the fit; the record says how
    many of the 48 directions are left (d − rank removed, every row counted)."""
    x, y, _ = planted(n=60)
    from cdsbias.methods.inlp_fit import InlpCapacityWarning

    few = inlp_projection(x, y, iterations=2)
    assert few.details["dimensions_remaining"] == D - few.rank_removed
    assert few.details["dimensions_remaining"] == np.linalg.matrix_rank(few.projection)
    with pytest.warns(InlpCapacityWarning, match="only 48"):
        many = inlp_projection(x, y, iterations=24)
    assert many.rank_removed > 40  # up to 3 a round: nearly everything is gone
    assert many.details["dimensions_remaining"] == D - many.rank_removed
    assert many.record()["details"]["dimensions_remaining"] < 8
