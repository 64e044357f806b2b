"""Linear concept erasure fitted once on sentence features: SentenceDebias, INLP, LEACE.

Each fit returns an :class:`AffineErasure`, the map ``x ↦ P x + b`` applied to every
token's final hidden state (``b = 0`` for the two orthogonal projections), with what a
run folder records about the fit. :mod:`cdsbias.methods.head_fold` folds the map into a
masked LM's head or hooks it onto the base model's output.

* **SentenceDebias** (Liang et al. 2020, "Towards Debiasing Sentence Representations"):
  ``P = I − U Uᵀ`` with ``U`` the first principal component(s) of counterfactual sets'
  embeddings (pairs for gender, one sentence per group for a k-group axis) centred on
  their set mean (:func:`group_subspace`).
* **INLP** (Ravfogel et al. 2020, "Null It Out"): linear classifiers trained one after
  another, each on the data projected onto the nullspaces of the previous ones; ``P`` the
  projection onto the intersection of all their nullspaces
  (:func:`cdsbias.methods.inlp_fit.inlp_projection`: the iteration and its capacity check
  live there; this module holds the map and the two closed-form fits).
* **LEACE** (Belrose et al. 2023, "LEACE: Perfect linear concept erasure in closed form"):
  the least-squares affine map after which no linear classifier beats a constant one —
  the class-conditional means of the erased features are equal (:func:`leace_eraser`).

Meade et al. (2022, bias-bench) choices are followed and named in each docstring.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cdsbias.errors import CdsbiasError

#: Methods whose fits this module provides (the recipe's ``posthoc_method`` values).
ERASURE_METHODS = ("sentence_debias", "inlp", "leace")
#: The same names, for code outside cdsbias/methods/ that dispatches on them (a registry
#: name is spelled only in the methods package).
SENTENCE_DEBIAS, INLP, LEACE = ERASURE_METHODS

#: File names of a saved :class:`AffineErasure` (in a run folder or a published model).
ERASURE_FILE = "posthoc_erasure.safetensors"
ERASURE_RECORD = "posthoc_fit.json"


@dataclass
class AffineErasure:
    """The fitted map ``x ↦ P x + b`` on hidden states of size ``d``, and its fit record.

    Attributes:
        method: ``sentence_debias``, ``inlp`` or ``leace``.
        projection: ``P``, ``[d, d]`` float64 (symmetric for SentenceDebias and INLP; an
            oblique projection for LEACE).
        bias: ``b``, ``[d]`` float64 (zeros for the linear methods).
        rank_removed: ``d − rank(P)``: how many directions the map removes.
        dev_accuracy: INLP's held-out accuracy of each iteration's classifier, before it
            was projected out (empty for the other methods).
        sentences_per_class: Fit sentences per class (``male``/``female``/``neutral`` for
            INLP and LEACE, pairs for SentenceDebias), filled in by the caller that chose them.
        fit_seconds: Wall time of the fit itself (features given).
        details: Method-specific facts (classifier settings, explained variance, ...).
    """

    method: str
    projection: np.ndarray
    bias: np.ndarray
    rank_removed: int
    dev_accuracy: list[float] = field(default_factory=list)
    sentences_per_class: dict[str, int] = field(default_factory=dict)
    fit_seconds: float = 0.0
    details: dict[str, object] = field(default_factory=dict)

    @property
    def hidden_size(self) -> int:
        return int(self.projection.shape[0])

    def apply(self, features: np.ndarray) -> np.ndarray:
        """``P x + b`` for each row ``x`` of ``features`` (``[n, d]``)."""
        return np.asarray(features, dtype=np.float64) @ self.projection.T + self.bias

    def record(self) -> dict[str, object]:
        """What the run folder records of the fit (JSON-ready; no matrices)."""
        out = asdict(self)
        del out["projection"], out["bias"]
        out["hidden_size"] = self.hidden_size
        out["affine"] = bool(np.any(self.bias))
        return out

    def save(self, folder: str | Path) -> None:
        """Writes ``P`` and ``b`` (safetensors) and the record (JSON) into ``folder``.

        Both files are written to temporary names first and renamed, so a crash leaves
        either the old pair or the new one.
        """
        from safetensors.numpy import save_file

        from cdsbias.io import atomic_path, atomic_write_text

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(folder / ERASURE_FILE) as tmp:
            save_file({"projection": self.projection, "bias": self.bias}, str(tmp))
        atomic_write_text(folder / ERASURE_RECORD, json.dumps(self.record(), indent=2) + "\n")

    @classmethod
    def load(cls, folder: str | Path) -> AffineErasure:
        """Reads what :meth:`save` wrote.

        Raises:
            CdsbiasError: If either file is missing, damaged or cut short (named).
        """
        from safetensors.numpy import load_file

        from cdsbias.io import check_safetensors

        folder = Path(folder)
        missing = [n for n in (ERASURE_FILE, ERASURE_RECORD) if not (folder / n).is_file()]
        if missing:
            raise CdsbiasError(f"{folder} holds no fitted erasure ({', '.join(missing)} missing).")
        check_safetensors(folder / ERASURE_FILE, fix=DAMAGED_FIT_FIX)
        tensors = load_file(str(folder / ERASURE_FILE))
        missing = [n for n in ("projection", "bias") if n not in tensors]
        if missing:
            raise CdsbiasError(
                f"{folder / ERASURE_FILE} holds no {' or '.join(missing)} tensor; "
                f"{DAMAGED_FIT_FIX}."
            )
        record = read_fit_record(folder) or {}
        for key in ("hidden_size", "affine"):
            record.pop(key, None)
        return cls(projection=tensors["projection"], bias=tensors["bias"], **record)


#: What to do about a damaged or missing fit file (the map or its record).
DAMAGED_FIT_FIX = (
    "copy the run's posthoc_fit.json and posthoc_erasure.safetensors again from where it "
    "was written, or fit again (train.py on the run's model with posthoc_only=true)"
)


def read_fit_record(folder: str | Path) -> dict[str, Any] | None:
    """The fit record :meth:`AffineErasure.save` wrote in ``folder`` (``posthoc_fit.json``),
    or None when the folder has none.

    Raises:
        CdsbiasError: A record that is not readable JSON of a mapping (cut short, damaged),
            named with the fix.
    """
    path = Path(folder) / ERASURE_RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CdsbiasError(
            f"{path} cannot be read ({detail}), so whether and how its post-hoc map applies "
            f"is unknown; {DAMAGED_FIT_FIX}."
        ) from None
    if not isinstance(record, dict):
        raise CdsbiasError(f"{path} holds no fit record (not a JSON object); {DAMAGED_FIT_FIX}.")
    return record


def _rank_removed(projection: np.ndarray) -> int:
    d = projection.shape[0]
    return int(d - np.linalg.matrix_rank(projection, hermitian=False))


def as_features(name: str, x: np.ndarray) -> np.ndarray:
    """``x`` as a float64 ``[n, d]`` array; an error naming ``name`` if empty or not finite."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise CdsbiasError(f"{name} must be a non-empty [n, hidden] array, got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise CdsbiasError(f"{name} holds NaN or infinite values.")
    return x


# ------------------------------------------------------------------------ SentenceDebias
def sentence_debias_subspace(male: np.ndarray, female: np.ndarray, k: int = 1) -> AffineErasure:
    """SentenceDebias's gender subspace: :func:`group_subspace` of the two sides of
    counterfactual pairs (bias-bench's ``compute_gender_subspace``).

    Args:
        male: ``[n, d]`` embeddings of the male side of each pair.
        female: ``[n, d]`` embeddings of the female side, row-aligned with ``male``.
        k: Number of components removed (``sentence_debias_components``).
    """
    return group_subspace([male, female], components=k, names=("male", "female"))


def group_subspace(
    groups: Sequence[np.ndarray], components: int = 1, names: Sequence[str] | None = None
) -> AffineErasure:
    """SentenceDebias's bias subspace of k-group counterfactual sets, and the projection
    that removes it.

    Liang et al. (2020), as bias-bench's ``compute_gender_subspace`` (k = 2) and
    ``compute_race_subspace`` / ``compute_religion_subspace`` (k = 3): row ``i`` of each
    group's array embeds the same sentence naming that group (bias-bench embeds each by the
    attention-masked mean of the last hidden layer and L2-normalises it — the caller's
    encoder does that). Each set is centred on its k-way mean ``μ_i = Σ_g e_{g,i} / k``,
    the centred rows of all groups are stacked (group 0's first) and their first
    ``components`` principal components ``U`` taken (scikit-learn ``PCA``; bias-bench keeps
    one). Every token's hidden state is then debiased by ``x ↦ (I − U Uᵀ) x``, as
    bias-bench's hook ``x − (x·v) v / (v·v)`` does for one direction.

    The stacked rows sum to zero, so PCA's own centring changes nothing; for k = 2 the
    subspace is that of the paired differences ``e_0 − e_1``. The sign of each component is
    fixed so that the mean of ``e_0 − mean of the other groups`` projects non-negatively
    (for gender: the component points the male way); a component orthogonal to it has its
    largest coordinate made positive. The projection does not depend on these signs.

    A consequence of the L2 normalisation (kept for parity): a group shift ``h ± s·u``
    that changes a state's length (``⟨h, u⟩ ≠ 0``) gives normalised differences with a
    part along ``h`` too, so the first component leans off ``u`` by a few degrees; the
    projection then leaves a small part of the shift in place.

    Args:
        groups: ``k ≥ 2`` arrays ``[n, d]``, row-aligned (one counterfactual set per row).
        components: Number of components removed (``sentence_debias_components``).
        names: The groups' names, for error messages.

    Returns:
        The erasure; ``details`` holds the components and their explained variance ratio.

    Raises:
        CdsbiasError: On fewer than two groups, mismatched shapes, too few sets for
            ``components`` or a bad ``components``.
    """
    from sklearn.decomposition import PCA

    start = time.perf_counter()
    names = list(names) if names is not None else [f"group {i}" for i in range(len(groups))]
    if len(groups) < 2:
        raise CdsbiasError(f"SentenceDebias needs two groups or more, got {len(groups)}.")
    arrays = [as_features(name, array) for name, array in zip(names, groups, strict=True)]
    if any(array.shape != arrays[0].shape for array in arrays):
        counts = " and ".join(f"{a.shape[0]} {name}" for name, a in zip(names, arrays))
        sizes = " and ".join(str(a.shape[1]) for a in arrays)
        raise CdsbiasError(
            f"SentenceDebias needs aligned {'pairs' if len(arrays) == 2 else 'sets'}: "
            f"{counts} embeddings of sizes {sizes}."
        )
    n, d = arrays[0].shape
    if not 1 <= components <= min(n, d):
        raise CdsbiasError(
            f"sentence_debias_components must be between 1 and {min(n, d)} "
            f"({'pairs' if len(arrays) == 2 else 'sets'} and hidden size), got {components}."
        )
    # Summed in group order and divided once: for two groups, (male + female) / 2 exactly.
    mean = sum(arrays[1:], arrays[0]) / float(len(arrays))
    stacked = np.concatenate([array - mean for array in arrays], axis=0)
    pca = PCA(n_components=components, svd_solver="full").fit(stacked)
    vectors = np.array(pca.components_, dtype=np.float64)
    others = arrays[1] if len(arrays) == 2 else sum(arrays[2:], arrays[1]) / (len(arrays) - 1)
    difference = (arrays[0] - others).mean(axis=0)
    for row in vectors:
        along = float(row @ difference)
        flip = along < 0 if abs(along) > 1e-12 else row[np.argmax(np.abs(row))] < 0
        if flip:
            row *= -1
    projection = np.eye(d) - vectors.T @ vectors
    return AffineErasure(
        method="sentence_debias",
        projection=projection,
        bias=np.zeros(d),
        rank_removed=components,
        sentences_per_class={"pairs" if len(arrays) == 2 else "sets": n},
        fit_seconds=time.perf_counter() - start,
        details={
            "components": vectors.tolist(),
            "explained_variance_ratio": [float(r) for r in pca.explained_variance_ratio_],
        },
    )


# ------------------------------------------------------------------------------- LEACE
def leace_eraser(x: np.ndarray, z: np.ndarray) -> AffineErasure:
    """LEACE (Belrose et al. 2023) through EleutherAI's ``concept-erasure`` package.

    With ``Σ_xx`` the features' covariance (the package shrinks it toward a scaled
    identity, Ledoit-Wolf style), ``Σ_xz`` their cross-covariance with the one-hot concept
    ``z``, ``W = Σ_xx^{-1/2}`` (pseudo-inverse square root) and ``U`` an orthonormal basis
    of ``col(W Σ_xz)``, the eraser is the affine map

        ``x ↦ x − W⁺ U Uᵀ W (x − E[x])``   i.e.   ``P = I − W⁺ U Uᵀ W``, ``b = (I − P) E[x]``,

    the least-squares change of ``x`` after which ``Cov(P x + b, z) = 0``: every class has
    the same mean, so no linear classifier does better than a constant. It removes at most
    ``classes − 1`` directions. The package's defaults are kept (``affine=True``,
    shrinkage, singular values of ``W Σ_xz`` under 0.01 dropped, and the covariance-trace
    constraint that mixes ``P`` toward the orthogonal projection if erasure would raise the
    features' total variance — a guard for features fed back into a model).

    bias-bench has no LEACE; its INLP sentences and mean pooling are the natural inputs.

    Args:
        x: ``[n, d]`` sentence features.
        z: ``[n]`` class labels (any hashable values; one-hot encoded here).

    Returns:
        The erasure (an oblique projection ``P`` and a non-zero ``b``).

    Raises:
        CdsbiasError: On fewer than two classes or mismatched lengths.
    """
    import warnings

    import torch

    with warnings.catch_warnings():
        # The package decorates a helper with torch.jit.script, deprecated in torch 2.13.
        warnings.simplefilter("ignore", DeprecationWarning)
        from concept_erasure import LeaceFitter

    x = as_features("LEACE features", x)
    z = np.asarray(z)
    if len(z) != len(x):
        raise CdsbiasError(f"LEACE got {len(x)} feature rows but {len(z)} labels.")
    classes, codes = np.unique(z, return_inverse=True)
    if len(classes) < 2:
        raise CdsbiasError("LEACE needs at least two classes among its sentences.")
    start = time.perf_counter()
    one_hot = torch.nn.functional.one_hot(torch.from_numpy(codes), len(classes)).double()
    fitter = LeaceFitter.fit(torch.from_numpy(x), one_hot)
    eraser = fitter.eraser
    d = x.shape[1]
    low_rank = (eraser.proj_left @ eraser.proj_right).numpy()
    projection = np.eye(d) - low_rank
    bias = low_rank @ eraser.bias.numpy() if eraser.bias is not None else np.zeros(d)
    return AffineErasure(
        method="leace",
        projection=projection,
        bias=bias,
        rank_removed=int(np.linalg.matrix_rank(low_rank)),
        sentences_per_class={},
        fit_seconds=time.perf_counter() - start,
        details={"package": "concept-erasure", "classes": [str(c) for c in classes]},
    )
