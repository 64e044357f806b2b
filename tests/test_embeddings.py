"""Batched sentence encodings against bias-bench's one-sentence-at-a-time loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.embeddings import encode_sentences

# Lengths differ so batches carry padding; one duplicate is encoded once.
SENTENCES = [
    "He is a nurse.",
    "This woman is a lodging manager.",
    "My brother works as a roofer.",
    "She applied for the position of director of religious activities.",
    "He is a nurse.",
    "My dad, the judge, had a good day at work.",
    "This is my mom.",
]


def one_at_a_time(folder, sentences, *, pooling="mean", normalize=False, layer=-1):
    """The reference: bias-bench's SEAT ``_encode`` loop, written from its description:
    ``AutoModel``, one sentence per forward pass (no padding), mean over every token."""
    model = AutoModel.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    rows = []
    with torch.no_grad():
        for sentence in sentences:
            inputs = tokenizer(sentence, return_tensors="pt")
            output = model(**inputs, output_hidden_states=True)
            states = output.last_hidden_state if layer == -1 else output.hidden_states[layer]
            vector = states[0, 0] if pooling == "cls" else states.mean(dim=1)[0]
            vector = vector.double().numpy()
            rows.append(vector / np.linalg.norm(vector) if normalize else vector)
    return np.stack(rows)


def scorer_of(folder, batch_size=3):
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    return MaskedLMScorer(model, AutoTokenizer.from_pretrained(folder), batch_size=batch_size)


@pytest.mark.parametrize(
    "arch", ["bert", "distilbert", "roberta", "albert", "xlm-roberta", "deberta-v2", "modernbert"]
)
def test_batched_mean_equals_one_sentence_protocol(zoo, arch):
    scorer = scorer_of(zoo[arch])
    got = encode_sentences(scorer, SENTENCES, normalize=True)
    expected = one_at_a_time(zoo[arch], SENTENCES, normalize=True)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-12)
    # The duplicate was run once: 6 distinct sentences.
    assert scorer.sequences_run == len(set(SENTENCES))
    np.testing.assert_array_equal(got[0], got[4])


def test_unnormalised_mean_includes_special_tokens(tiny_bert):
    scorer = scorer_of(tiny_bert)
    got = encode_sentences(scorer, SENTENCES)
    np.testing.assert_allclose(got, one_at_a_time(tiny_bert, SENTENCES), atol=1e-6, rtol=0)
    # Leaving [CLS] and [SEP] out of the mean gives a different vector: they are in.
    model = AutoModel.from_pretrained(tiny_bert).eval()
    with torch.no_grad():
        states = model(**scorer.tokenizer(SENTENCES[0], return_tensors="pt")).last_hidden_state
    inner = states[0, 1:-1].mean(dim=0).double().numpy()
    assert np.abs(got[0] - inner).max() > 1e-3


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_cls_pooling_reads_position_zero(zoo, arch):
    scorer = scorer_of(zoo[arch])
    got = encode_sentences(scorer, SENTENCES, pooling="cls")
    expected = one_at_a_time(zoo[arch], SENTENCES, pooling="cls")
    np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)
    assert not np.allclose(got, encode_sentences(scorer, SENTENCES), atol=1e-3)


@pytest.mark.parametrize("layer", [0, 1, -2])
def test_other_layers_read_hidden_states(tiny_bert, layer):
    scorer = scorer_of(tiny_bert)
    got = encode_sentences(scorer, SENTENCES, layer=layer)
    expected = one_at_a_time(tiny_bert, SENTENCES, layer=layer)
    np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)


def test_rows_follow_input_order_whatever_the_batch_size(tiny_bert):
    one = encode_sentences(scorer_of(tiny_bert, batch_size=1), SENTENCES)
    many = encode_sentences(scorer_of(tiny_bert, batch_size=64), SENTENCES[::-1])
    np.testing.assert_allclose(many[::-1], one, atol=1e-6, rtol=0)
    empty = encode_sentences(scorer_of(tiny_bert), [])
    assert empty.shape == (0, one.shape[1])


def test_bad_input_is_one_readable_error(tiny_bert):
    scorer = scorer_of(tiny_bert)
    with pytest.raises(CdsbiasError, match="Unknown pooling 'max'"):
        encode_sentences(scorer, SENTENCES, pooling="max")
    with pytest.raises(CdsbiasError, match="layer 7 does not exist"):
        encode_sentences(scorer, SENTENCES, layer=7)
    with pytest.raises(CdsbiasError, match="empty sentence"):
        encode_sentences(scorer, ["He is a nurse.", "  "])
    with pytest.raises(CdsbiasError, match="tokens long"):
        encode_sentences(scorer, [" ".join(["nurse"] * 200)])
