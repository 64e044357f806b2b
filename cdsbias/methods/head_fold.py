"""Applying a fitted erasure ``h ↦ P h + b`` to a masked LM: folded into its head, or hooked.

bias-bench applies SentenceDebias and INLP as a forward hook on the base model
(``model.bert.register_forward_hook``) that rewrites ``last_hidden_state`` — a model that
only its own classes can rebuild. In every ``*ForMaskedLM`` here the base model's output
goes straight into a ``Linear`` (the first layer of the MLM head), so the map can be
folded into that layer's weights instead::

    W (P h + b) + c  =  (W P) h + (c + W b)      W ← W·P,  c ← c + W·b

which gives exactly the hooked model's logits and a plain checkpoint that
``from_pretrained``, ``cdsbias evaluate`` and ``publish`` load with no custom code. Only the
MLM head sees the folded map: the model's hidden states (``output_hidden_states``, a
sentence encoder built on the base model) are the original ones. :func:`hook` keeps
bias-bench's forward hook for users who need debiased hidden states.

A benchmark that reads sentence encodings (SEAT) would then score the *undebiased*
encoder of a folded run, while bias-bench scores SEAT through its hook. So a model carries
the map it was given (:func:`applied_erasure`: by :func:`fold`, :func:`hook`, or
:func:`remember_folded` when a folded run folder is loaded), and the encodings are read
through it (:func:`through_map`, used by :func:`cdsbias.scoring.embeddings.encode_sentences`):
a folded run's SEAT equals its hooked twin's. :func:`representation` says in words what a
reader of the last hidden state saw, for the benchmark summary and the card.

:data:`HEAD_LAYERS` is the table of each architecture's first head layer, checked against
transformers 5.x and the tiny models of ``tests/tiny_models.py``
(``tests/test_posthoc_fold.py``: fold ≡ hook to 1e-5 on each).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from cdsbias.errors import CdsbiasError
from cdsbias.methods import REGISTRY, load_all
from cdsbias.methods.erasure import AffineErasure

#: ``posthoc_apply`` values.
APPLY_MODES = ("fold", "hook")

#: ``*ForMaskedLM`` class -> dotted path(s) of the ``Linear`` that first reads the base
#: model's output. Where a class has two head layouts, the first path present is used.
HEAD_LAYERS: dict[str, tuple[str, ...]] = {
    # BertOnlyMLMHead: transform.dense (hidden -> hidden), GELU, LayerNorm, decoder.
    "BertForMaskedLM": ("cls.predictions.transform.dense",),
    # RobertaLMHead / XLMRobertaLMHead: dense, GELU, layer_norm, decoder.
    "RobertaForMaskedLM": ("lm_head.dense",),
    "XLMRobertaForMaskedLM": ("lm_head.dense",),
    # Head layers sit on the model itself: vocab_transform, activation, layer norm, projector.
    "DistilBertForMaskedLM": ("vocab_transform",),
    # AlbertMLMHead: dense maps hidden (768) to the embedding size (128) before the decoder.
    "AlbertForMaskedLM": ("predictions.dense",),
    # The generator's ElectraGeneratorPredictions: dense (hidden -> embedding size).
    "ElectraForMaskedLM": ("generator_predictions.dense",),
    # ModernBertPredictionHead: dense (bias only if config.classifier_bias), act, norm.
    "ModernBertForMaskedLM": ("head.dense",),
    # config.legacy (the default, hub checkpoints): cls.predictions.transform.dense;
    # legacy=False: lm_predictions.lm_head.dense (DebertaV2LMPredictionHead).
    "DebertaV2ForMaskedLM": ("cls.predictions.transform.dense", "lm_predictions.lm_head.dense"),
}

#: Attribute of the (unwrapped) model holding ``(erasure, mode)``: the map it was given.
_APPLIED = "_cdsbias_applied_erasure"

#: Classes whose head layer may have no bias term, and the config key that gives it one
#: (so a folded ``b`` survives ``save_pretrained``/``from_pretrained``).
BIAS_CONFIG_KEYS = {"ModernBertForMaskedLM": "classifier_bias"}


def _unwrap(model: Any) -> Any:
    """The transformers model inside a peft wrapper (LoRA layers stay where they are)."""
    get_base_model = getattr(model, "get_base_model", None)
    return get_base_model() if callable(get_base_model) else model


def head_layer(model: Any) -> Any:
    """The ``torch.nn.Linear`` that first reads the base model's output (see the table).

    Raises:
        CdsbiasError: If the architecture is not in :data:`HEAD_LAYERS` or the layer there
            is not a plain ``Linear``; the message names the fix ``posthoc_apply: hook``.
    """
    import torch

    model = _unwrap(model)
    name = type(model).__name__
    fix = "use posthoc_apply: hook, which works on any masked LM"
    if name not in HEAD_LAYERS:
        raise CdsbiasError(
            f"posthoc_apply: fold does not know where the MLM head of {name} starts; {fix}."
        )
    for path in HEAD_LAYERS[name]:
        try:
            layer = model.get_submodule(path)
        except AttributeError:
            continue
        if type(layer) is not torch.nn.Linear:
            raise CdsbiasError(
                f"{name}.{path} is a {type(layer).__name__}, not a plain Linear, so the "
                f"erasure cannot be folded into it; {fix}."
            )
        return layer
    raise CdsbiasError(
        f"{name} has none of {', '.join(HEAD_LAYERS[name])}; {fix}."
    )  # pragma: no cover - a transformers layout change


def _check_size(erasure: AffineErasure, size: int, where: str) -> None:
    if erasure.hidden_size != size:
        raise CdsbiasError(
            f"The {erasure.method} erasure was fitted on hidden size {erasure.hidden_size}, "
            f"but {where} has size {size}; fit it on this model."
        )


def fold(model: Any, erasure: AffineErasure) -> Any:
    """Folds ``h ↦ P h + b`` into the model's first head layer, in place.

    ``W ← W·P`` and ``c ← c + W·b`` are computed in float64 and stored in the layer's
    dtype. A head layer without a bias gets one when ``b ≠ 0`` if its architecture has a
    config key for it (:data:`BIAS_CONFIG_KEYS`, set to true so the saved checkpoint
    reloads with it).

    Args:
        model: A ``*ForMaskedLM`` (or a peft model around one).
        erasure: The fitted map, on the model's hidden size.

    Returns:
        The same model.

    Raises:
        CdsbiasError: Unknown head (fix: ``posthoc_apply: hook``), a size mismatch, or a
            non-zero ``b`` for a bias-less head with no config key.
    """
    import torch

    inner = _unwrap(model)
    layer = head_layer(inner)
    _check_size(erasure, layer.in_features, f"{type(inner).__name__}'s MLM head input")
    weight = layer.weight.detach().to(torch.float64).cpu().numpy()
    new_weight = weight @ erasure.projection
    shift = weight @ erasure.bias
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(new_weight).to(layer.weight.dtype))
        if np.any(shift):
            if layer.bias is None:
                key = BIAS_CONFIG_KEYS.get(type(inner).__name__)
                if key is None:
                    raise CdsbiasError(
                        f"{type(inner).__name__}'s head layer has no bias for the affine "
                        f"{erasure.method} map; use posthoc_apply: hook."
                    )
                layer.bias = torch.nn.Parameter(
                    torch.zeros(layer.out_features, dtype=layer.weight.dtype,
                                device=layer.weight.device)
                )  # fmt: skip
                setattr(inner.config, key, True)
            added = torch.from_numpy(shift).to(layer.bias.device)
            layer.bias.copy_((layer.bias.detach().to(torch.float64) + added).to(layer.bias.dtype))
    setattr(inner, _APPLIED, (erasure, "fold"))
    return model


def hook(model: Any, erasure: AffineErasure) -> Any:
    """Applies ``h ↦ P h + b`` to the base model's last hidden state with a forward hook.

    As bias-bench's ``_SentenceDebiasModel``/``_INLPModel`` hooks, but on any
    architecture (``model.base_model``) and for affine maps: everything downstream — the
    MLM head and whoever reads ``last_hidden_state`` — sees debiased states. The hook does
    not survive ``save_pretrained``; whoever loads the model re-attaches it from the saved
    erasure (:meth:`AffineErasure.load`).

    Args:
        model: A ``*ForMaskedLM`` (or a peft model around one).
        erasure: The fitted map, on the model's hidden size.

    Returns:
        A handle as ``torch.utils.hooks.RemovableHandle``: ``.remove()`` undoes the hook
        and the model's record of it (:func:`applied_erasure`).
    """
    applied = (erasure, "hook")
    setattr(_unwrap(model), _APPLIED, applied)
    return _HookHandle(_register(model, erasure), _unwrap(model), applied)


class _HookHandle:
    """:func:`hook`'s ``RemovableHandle``, whose ``remove()`` also forgets the model's record
    of the map (:func:`applied_erasure`), so a model unhooked reads as plain again."""

    def __init__(self, handle: Any, model: Any, applied: tuple[AffineErasure, str]) -> None:
        self.handle, self.model, self.applied = handle, model, applied

    def remove(self) -> None:
        self.handle.remove()
        if getattr(self.model, _APPLIED, None) is self.applied:
            delattr(self.model, _APPLIED)

    def __getattr__(self, name: str) -> Any:  # id, hooks_dict_ref, ... of the handle
        if name == "handle":
            raise AttributeError(name)
        return getattr(self.handle, name)


def _register(model: Any, erasure: AffineErasure) -> Any:
    """The forward hook of :func:`hook`, registered without recording it on the model."""
    import torch

    base = _unwrap(model).base_model
    size = int(getattr(base.config, "hidden_size", getattr(base.config, "dim", 0)))
    _check_size(erasure, size, f"{type(base).__name__}'s output")
    cache: dict[tuple[Any, Any], tuple[Any, Any]] = {}

    def erase(module: Any, inputs: Any, output: Any) -> Any:
        hidden = output[0]
        key = (hidden.device, hidden.dtype)
        if key not in cache:
            cache[key] = (
                torch.from_numpy(erasure.projection.T).to(device=hidden.device, dtype=hidden.dtype),
                torch.from_numpy(erasure.bias).to(device=hidden.device, dtype=hidden.dtype),
            )
        transposed, bias = cache[key]
        erased = hidden @ transposed + bias
        if isinstance(output, tuple):
            return (erased, *output[1:])
        output["last_hidden_state"] = erased
        return output

    return base.register_forward_hook(erase)


def applied_erasure(model: Any) -> tuple[AffineErasure, str] | None:
    """``(erasure, "fold" | "hook")``: the map :func:`fold`, :func:`hook` or
    :func:`remember_folded` gave ``model`` (or the model a peft wrapper holds); None."""
    return getattr(_unwrap(model), _APPLIED, None)


def records_folded_fit(folder: str | Path) -> bool:
    """Whether the fit record in ``folder`` (``posthoc_fit.json``) is of a map folded into
    the head (``posthoc_apply: fold``); False without a readable record."""
    import json

    from cdsbias.methods.erasure import read_fit_record

    try:
        record = read_fit_record(folder)
    except (OSError, json.JSONDecodeError):
        return False
    details = (record or {}).get("details") or {}
    return details.get("posthoc_apply") == "fold"


def remember_folded(model: Any, folder: str | Path) -> Any:
    """Records on ``model`` the map a ``posthoc_apply: fold`` run saved in ``folder``
    (``posthoc_fit.json`` and ``posthoc_erasure.safetensors``), so that its sentence
    encodings are read through the map as the run's post-hoc point read them. The weights
    are not touched (the map is in the head already). A folder without a folded fit, or one
    whose map does not fit the model, leaves the model as it is.
    """
    from cdsbias.methods.erasure import ERASURE_FILE

    folder = Path(folder)
    if not records_folded_fit(folder) or not (folder / ERASURE_FILE).is_file():
        return model
    erasure = AffineErasure.load(folder)
    inner = _unwrap(model)
    size = int(getattr(inner.config, "hidden_size", getattr(inner.config, "dim", 0)))
    if erasure.hidden_size == size:
        setattr(inner, _APPLIED, (erasure, "fold"))
    return model


@contextmanager
def through_map(model: Any, layer: int = -1) -> Iterator[None]:
    """Inside the block, the base model's last hidden state passes through the map a
    *folded* model carries (the hook :func:`hook` would attach, removed on exit), so a
    reader of sentence encodings sees what the MLM head sees, as bias-bench's SEAT does. A
    hooked model has its map on already; a model without one, or ``layer != -1`` (the map
    acts on the last hidden state only, as bias-bench's hook), is read as it is."""
    applied = applied_erasure(model)
    if applied is None or applied[1] != "fold" or layer != -1:
        yield
        return
    handle = _register(model, applied[0])
    try:
        yield
    finally:
        handle.remove()


def representation(model: Any, layer: int = -1) -> str:
    """Which hidden states a reader of ``model``'s encoder gets, in words: ``"encoder"``,
    or ``"encoder through the SentenceDebias map (fold)"`` (or ``(hook)``); a ``layer``
    other than the last says the map does not reach it."""
    applied = applied_erasure(model)
    where = "encoder" if layer == -1 else f"encoder, hidden states {layer}"
    if applied is None:
        return where
    load_all()
    erasure, mode = applied
    method = REGISTRY[erasure.method].title if erasure.method in REGISTRY else erasure.method
    if layer != -1:
        return f"{where} (the {method} map acts on the last hidden state only)"
    return f"encoder through the {method} map ({mode})"


def applied_description(mode: str, erasure: AffineErasure) -> str:
    """One sentence for the model card: how the erasure is applied and what sees it."""
    if mode not in APPLY_MODES:
        raise CdsbiasError(f"posthoc_apply must be one of {', '.join(APPLY_MODES)}, got '{mode}'.")
    removed = f"{erasure.method} ({erasure.rank_removed} direction(s) removed)"
    if mode == "fold":
        return (
            f"The {removed} is folded into the first layer of the MLM head (W ← W·P, "
            "c ← c + W·b): only the MLM head sees it; the model's hidden states are the "
            "original ones (cdsbias reads sentence encodings, e.g. for SEAT, through the "
            "saved map, as bias-bench's hook does)."
        )
    return (
        f"The {removed} is applied by a forward hook on the base model's output: the MLM "
        "head and every reader of the last hidden state see debiased states. The hook must "
        "be re-attached after loading."
    )
