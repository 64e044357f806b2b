"""Folding an erasure into the MLM head gives exactly the hooked model's logits."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from tiny_models import ARCHITECTURES

from cdsbias.errors import CdsbiasError
from cdsbias.methods.erasure import AffineErasure
from cdsbias.methods.head_fold import (
    HEAD_LAYERS,
    applied_description,
    applied_erasure,
    fold,
    head_layer,
    hook,
)

TEXTS = ["He is a nurse.", "My sister works as a mason.", "The judge told the clerk."]


def affine_erasure(size: int, seed: int = 0) -> AffineErasure:
    """An oblique rank-2 projection plus a shift, like LEACE's (fold must handle both)."""
    rng = np.random.default_rng(seed)
    left = rng.normal(size=(size, 2)) / np.sqrt(size)
    right = np.linalg.pinv(left)  # right @ left = I, so P = I − left·right is idempotent
    projection = np.eye(size) - left @ right
    return AffineErasure("leace", projection, rng.normal(size=size) * 0.1, rank_removed=2)


def load(folder, **config_changes):
    import torch
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    if config_changes:
        config = AutoConfig.from_pretrained(folder, **config_changes)
        torch.manual_seed(0)
        model = AutoModelForMaskedLM.from_config(config)
    else:
        model = AutoModelForMaskedLM.from_pretrained(folder)
    return model.eval(), tokenizer


def logits(model, tokenizer):
    import torch

    batch = tokenizer(TEXTS, return_tensors="pt", padding=True)
    with torch.inference_mode():
        return model(**batch).logits.double().numpy()


CASES = [(name, {}) for name in ARCHITECTURES] + [("deberta-v2", {"legacy": False})]


@pytest.mark.parametrize(
    ("architecture", "changes"), CASES, ids=[*ARCHITECTURES, "deberta-v2-nonlegacy"]
)
def test_fold_equals_hook_and_reloads_as_plain_checkpoint(zoo, tmp_path, architecture, changes):
    from transformers import AutoModelForMaskedLM

    model, tokenizer = load(zoo[architecture], **changes)
    erasure = affine_erasure(model.config.hidden_size)
    plain = logits(model, tokenizer)
    hooked_model = copy.deepcopy(model)
    handle = hook(hooked_model, erasure)
    hooked = logits(hooked_model, tokenizer)
    folded_model = fold(copy.deepcopy(model), erasure)
    folded = logits(folded_model, tokenizer)
    assert np.abs(folded - hooked).max() < 1e-5
    assert np.abs(folded - plain).max() > 1e-3  # the map did change the logits
    assert applied_erasure(hooked_model) == (erasure, "hook")
    assert applied_erasure(folded_model) == (erasure, "fold")
    handle.remove()
    np.testing.assert_array_equal(logits(hooked_model, tokenizer), plain)
    assert applied_erasure(hooked_model) is None  # unhooked: read as plain again
    if architecture == "modernbert":  # its head layer had no bias; the fold gave it one
        assert folded_model.config.classifier_bias
    folded_model.save_pretrained(tmp_path)
    reloaded = AutoModelForMaskedLM.from_pretrained(tmp_path).eval()
    assert np.abs(logits(reloaded, tokenizer) - folded).max() < 1e-6


def test_every_architecture_has_a_head_layer_entry(zoo):
    model, _ = load(zoo["albert"])
    layer = head_layer(model)
    # ALBERT's head maps the hidden size down to the embedding size first.
    assert (layer.in_features, layer.out_features) == (
        model.config.hidden_size,
        model.config.embedding_size,
    )
    assert "AlbertForMaskedLM" in HEAD_LAYERS


def test_linear_projection_folds_without_touching_the_bias(zoo):
    model, _ = load(zoo["bert"])
    layer = head_layer(model)
    before = layer.bias.detach().clone()
    size = model.config.hidden_size
    v = np.eye(size)[0]
    fold(model, AffineErasure("inlp", np.eye(size) - np.outer(v, v), np.zeros(size), 1))
    assert (layer.bias.detach() == before).all()
    assert layer.weight.detach()[:, 0].abs().max() == 0


def test_unknown_head_names_the_hook_fix(zoo):
    import torch

    class ToyForMaskedLM(torch.nn.Module):
        pass

    with pytest.raises(CdsbiasError, match="posthoc_apply: hook"):
        head_layer(ToyForMaskedLM())
    model, _ = load(zoo["bert"])
    with pytest.raises(CdsbiasError, match="hidden size 5"):
        fold(model, AffineErasure("inlp", np.eye(5), np.zeros(5), 0))


def test_card_sentence_says_what_sees_the_map():
    erasure = AffineErasure("inlp", np.eye(3), np.zeros(3), rank_removed=2)
    assert "only the MLM head" in applied_description("fold", erasure)
    assert "forward hook" in applied_description("hook", erasure)
    with pytest.raises(CdsbiasError, match="posthoc_apply"):
        applied_description("merge", erasure)
