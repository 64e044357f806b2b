"""INLP's fit (Ravfogel et al. 2020, "Null It Out: Guarding Protected Attributes by
Iterative Nullspace Projection"): the iteration of linear classifiers, bias-bench's split
and classifier settings, and the check that the iterations leave the hidden states some
directions. The map it returns and the closed-form fits (SentenceDebias, LEACE) are in
:mod:`cdsbias.methods.erasure`.
"""

from __future__ import annotations

import time

import numpy as np

from cdsbias.errors import CdsbiasError
from cdsbias.methods.erasure import AffineErasure, as_features

#: bias-bench's LinearSVC settings (``_apply_nullspace_projection``, "the same classifier
#: hyperparameters as Liang et al.").
INLP_CLASSIFIER = {"fit_intercept": False, "class_weight": None, "dual": False, "random_state": 0}
#: What bias-bench multiplies INLP's training features by before each classifier: its
#: dropout mask at ``dropout_rate=0`` is all ones times ``1/(1 − rate + 1e-6)``. Kept for
#: parity; it moves the projection by up to ~1e-5 (``scripts/posthoc_parity.py``). The dev
#: features are not scaled.
BIAS_BENCH_TRAIN_SCALE = 1.0 / (1.0 + 1e-6)


class InlpCapacityWarning(UserWarning):
    """INLP may remove every direction of the hidden states (see :func:`inlp_capacity`)."""


def directions_per_iteration(classes: int) -> int:
    """The most directions one INLP iteration removes: the rank of its classifier's weight
    matrix, which has one row per class with three or more classes (scikit-learn's
    one-vs-rest ``LinearSVC``) and a single row with two."""
    return classes if classes > 2 else 1


def inlp_capacity(iterations: int, classes: int, hidden_size: int) -> str | None:
    """A warning text when ``iterations`` can remove every direction of the hidden states,
    else None.

    Iteration ``i`` removes the row space of its classifier ``W_i``, up to
    :func:`directions_per_iteration` directions: 3 with bias-bench's three classes (male,
    female, neutral; ``coef_`` is ``3 × d``), 1 with two. The warning fires when
    ``iterations × that ≥ hidden_size``, where the projection can leave the MLM head nothing
    to read. bias-bench's 80 iterations were set for 768-dimensional BERT: 80 × 3 = 240 of
    768 directions at most; on the demo's 128-dimensional model they remove all 128 (43
    iterations already can: 43 × 3 = 129), and 10 iterations remove 30. Supported (the fit
    runs), but the text names the fix.
    """
    per_iteration = directions_per_iteration(classes)
    if iterations * per_iteration < hidden_size:
        return None
    # bias-bench's share of directions (iterations scaled by hidden/768), kept below the
    # hidden size so the suggestion itself does not warn.
    scaled = max(1, min(round(iterations * hidden_size / 768), (hidden_size - 1) // per_iteration))
    return (
        f"inlp_iterations={iterations} with {classes} classes can remove up to "
        f"{iterations * per_iteration} directions ({per_iteration} per iteration, the rows of "
        f"its classifier), but the hidden states have only {hidden_size}: INLP can erase every "
        f"direction and leave the MLM head a constant. bias-bench's 80 is for 768 dimensions; "
        f"set inlp_iterations lower (e.g. {scaled}, scaled by {hidden_size}/768)."
    )


def _orthonormal_basis(matrix: np.ndarray) -> np.ndarray:
    """``scipy.linalg.orth``: an orthonormal basis of the column space (INLP's choice)."""
    from scipy.linalg import orth

    if np.allclose(matrix, 0):
        return np.zeros((matrix.shape[0], 0))
    return orth(matrix)


def inlp_split(
    x: np.ndarray, y: np.ndarray, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """bias-bench's split of INLP's features: 30% test, then 30% of the rest as dev.

    ``train_test_split(test_size=0.3, random_state=0)`` twice, as bias-bench's
    ``_split_gender_dataset``; the test part is not used by the fit (bias-bench drops it
    too), so train is 49% and dev 21% of the sentences.

    Returns:
        ``(x_train, y_train, x_dev, y_dev)``.
    """
    from sklearn.model_selection import train_test_split

    x_rest, _, y_rest, _ = train_test_split(x, y, test_size=0.3, random_state=seed)
    x_train, x_dev, y_train, y_dev = train_test_split(
        x_rest, y_rest, test_size=0.3, random_state=seed
    )
    return x_train, y_train, x_dev, y_dev


def inlp_projection(
    x: np.ndarray,
    y: np.ndarray,
    iterations: int = 80,
    *,
    dev: tuple[np.ndarray, np.ndarray] | None = None,
    seed: int = 0,
) -> AffineErasure:
    """Iterative Nullspace Projection (Ravfogel et al. 2020), with bias-bench's settings.

    Iteration ``i`` trains a linear classifier ``W_i`` (scikit-learn ``LinearSVC`` with
    :data:`INLP_CLASSIFIER`; one-vs-rest, so ``W_i`` has one row per class when there are
    three — male, female, neutral — and one row for two classes) on the training features
    projected onto ``N(W_1) ∩ … ∩ N(W_{i−1})``, records its dev accuracy, and adds
    ``P_R(W_i) = B_i B_iᵀ`` (``B_i`` an orthonormal basis of ``W_i``'s row space). The
    projection onto the intersection of all nullspaces is, by Ben-Israel's formula as in
    Ravfogel et al.'s ``debias.py``, ``P = I − P_R(Σ_i P_R(W_i))``. Since the range of
    ``Σ_i B_i B_iᵀ`` is the column space of ``[B_1 … B_n]``, this computes the same ``P``
    as ``I − Q Qᵀ`` with ``Q`` an orthonormal basis of the stacked ``B_i`` — an SVD of a
    ``d × 3n`` matrix per iteration instead of a ``d × d`` one. Every classifier is kept
    (bias-bench's ``min_accuracy = 0``, no dropout, ``is_autoregressive = True``), and
    trained on features times :data:`BIAS_BENCH_TRAIN_SCALE`, as bias-bench's zero-rate
    dropout mask scales them.

    The hidden size is the features' width (bias-bench hard-codes 768). When
    ``iterations ×`` :func:`directions_per_iteration` reaches it, an
    :class:`InlpCapacityWarning` names the fix
    (:func:`inlp_capacity`); ``details["dimensions_remaining"]`` records ``d − rank removed``.

    Args:
        x: ``[n, d]`` sentence features (bias-bench: the mean over all tokens, special
            tokens included, of the last hidden layer).
        y: ``[n]`` class labels (bias-bench: 1 male, 0 female, −1 neutral).
        iterations: Classifiers trained (``inlp_iterations``; bias-bench's 80).
        dev: ``(x_dev, y_dev)``; default :func:`inlp_split` of ``x, y``.
        seed: Seed of that split.

    Returns:
        The erasure; ``dev_accuracy`` has one entry per iteration.

    Raises:
        CdsbiasError: On fewer than two classes, mismatched lengths or ``iterations < 1``.
    """
    from sklearn.svm import LinearSVC

    x = as_features("INLP features", x)
    y = np.asarray(y)
    if len(y) != len(x):
        raise CdsbiasError(f"INLP got {len(x)} feature rows but {len(y)} labels.")
    if iterations < 1:
        raise CdsbiasError(f"inlp_iterations must be at least 1, got {iterations}.")
    if dev is None:
        x_train, y_train, x_dev, y_dev = inlp_split(x, y, seed)
    else:
        x_train, y_train = x, y
        x_dev, y_dev = as_features("INLP dev features", dev[0]), np.asarray(dev[1])
    if len(np.unique(y_train)) < 2:
        raise CdsbiasError("INLP needs at least two classes among its training sentences.")
    start = time.perf_counter()
    d = x.shape[1]
    capacity = inlp_capacity(iterations, len(np.unique(y_train)), d)
    if capacity:
        import warnings

        warnings.warn(capacity, InlpCapacityWarning, stacklevel=2)
    bases: list[np.ndarray] = []
    removed = np.zeros((d, 0))
    accuracy: list[float] = []
    train_now, dev_now = x_train, x_dev
    for _ in range(iterations):
        classifier = LinearSVC(**INLP_CLASSIFIER).fit(train_now * BIAS_BENCH_TRAIN_SCALE, y_train)
        accuracy.append(float(classifier.score(dev_now, y_dev)))
        bases.append(_orthonormal_basis(np.atleast_2d(classifier.coef_).T))
        removed = _orthonormal_basis(np.concatenate(bases, axis=1))
        # Project the *original* features, as Ravfogel et al. do, so rounding does not
        # accumulate over iterations.
        train_now = x_train - (x_train @ removed) @ removed.T
        dev_now = x_dev - (x_dev @ removed) @ removed.T
    projection = np.eye(d) - removed @ removed.T
    return AffineErasure(
        method="inlp",
        projection=projection,
        bias=np.zeros(d),
        rank_removed=int(removed.shape[1]),
        dev_accuracy=accuracy,
        fit_seconds=time.perf_counter() - start,
        details={
            "classifier": "sklearn.svm.LinearSVC",
            "classifier_params": dict(INLP_CLASSIFIER),
            "iterations": iterations,
            "dimensions_remaining": d - int(removed.shape[1]),
            "train_sentences": len(x_train),
            "dev_sentences": len(x_dev),
        },
    )
