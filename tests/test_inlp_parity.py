"""INLP on gender against bias-bench's own procedure, end to end on a seeded tiny model.

bias-bench (McGill-NLP/bias-bench, Meade et al. 2022) fits INLP in
``bias_bench/debias/inlp/context_nullspace_projection.py``: ``_extract_gender_features``
runs the encoder (``BertModel``, no LM head) on one sentence at a time, tokenized with
``add_special_tokens=True, truncation=True``, and takes ``torch.mean`` of
``last_hidden_state`` over every position (special tokens included, no normalisation);
``_split_gender_dataset`` stacks male, female and neutral features with labels 1, 0, −1 and
splits them with ``train_test_split(test_size=0.3, random_state=0)`` twice;
``get_debiasing_projection`` (``debias.py``) trains ``LinearSVC(fit_intercept=False,
class_weight=None, dual=False, random_state=0)`` on the training features times its
zero-rate dropout scale ``1/(1 − 0 + 1e-6)`` and removes the classifier's row space.

The loops below are written here from that description (not copied), and compared with
what cdsbias's fit reads and fits: the sentences, labels and split must be identical, the
features equal to float32 rounding, and the first classifier's removed directions the same.
A change of pooling, layer, special tokens, word map, labels or split fails one of them.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_posthoc_fit_sentences import bias_bench_inlp

from cdsbias.methods.fit_sentences import load_fit_pairs, select_inlp_sentences
from cdsbias.methods.inlp_fit import inlp_split
from cdsbias.train.posthoc_fit import fit_posthoc, inlp_features

#: Sentences per class: enough for a classifier on a 32-wide model, small enough to be fast.
PER_CLASS = 60
#: bias-bench's ``--seed`` draws the clipping; any value, as long as both sides get it.
CLIP_SEED = 3
#: Float32's machine epsilon: the features are float32 forward passes.
EPS32 = float(np.finfo(np.float32).eps)
#: The features come from float32 forward passes of different shapes (cdsbias pads and
#: batches, bias-bench runs one sentence at a time), so their sums are ordered differently:
#: a few eps32 of the largest feature per layer and per mean; 32 eps32 covers that with room
#: (measured: 1.1 eps32 here, 5 on a 12-layer, 768-wide BERT-base shape with the real
#: vocabulary; the golden files' spread over eight kernel settings reaches 16).
FEATURE_TOLERANCE_EPS = 32
#: The first classifier is liblinear's primal solve stopped at ``tol=1e-4``, so its direction
#: is fixed only that far; features differing by float32 rounding move it far less
#: (measured: sin 1.3e-6). Issue 37 reported a first direction at sin 0.45 from bias-bench's.
DIRECTION_TOLERANCE = 1e-3

# Development text of our own: people named by the default gender pairs' words or by none,
# sentences of 5 to about 60 words so the encoder's batches are cut by padded tokens.
SUBJECTS = ["he", "she", "the man", "the woman", "his father", "her mother", "my brother",
            "my sister", "the king", "the queen", "the clerk", "a teacher", "the engineer",
            "this nurse", "the mason", "our neighbour"]  # fmt: skip
VERBS = ["works as a", "wants to become a", "talked to the", "had a long day with the",
         "applied for the position of", "once met a"]  # fmt: skip
OBJECTS = ["doctor", "roofer", "judge", "secretary", "manager", "dental assistant", "taper",
           "kindergarten teacher", "mail clerk"]  # fmt: skip
TAILS = ["at work", "in the old town by the river", "for a good day", "before the meeting",
         "after the long and tiring shift at the lodging on the hill", ""]  # fmt: skip


def documents(n: int = 160, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        sentences = []
        for _ in range(rng.randint(1, 4)):
            words = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)]
            words += [rng.choice(TAILS) for _ in range(rng.choice([1, 1, 2, 6]))]
            sentences.append(" ".join(w for w in words if w).capitalize() + ".")
        out.append(" ".join(sentences))
    return out


def bias_bench_features(folder, sentences: list[str]) -> np.ndarray:
    """bias-bench's feature loop: one sentence per forward pass of the bare encoder,
    special tokens added, truncated to the tokenizer's limit, mean over every position of
    the last hidden state, kept in float32 as bias-bench's numpy arrays are."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    encoder = AutoModel.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    rows = []
    with torch.no_grad():
        for sentence in sentences:
            batch = tokenizer(sentence, add_special_tokens=True, truncation=True,
                              return_tensors="pt")  # fmt: skip
            hidden = encoder(**batch)["last_hidden_state"]
            rows.append(torch.mean(hidden, dim=1).squeeze().numpy())
    return np.array(rows)


def bias_bench_split(x: np.ndarray, y: np.ndarray):
    """``_split_gender_dataset``: 30% test, then 30% of the rest as dev, both seed 0."""
    from sklearn.model_selection import train_test_split

    x_rest, _, y_rest, _ = train_test_split(x, y, test_size=0.3, random_state=0)
    return train_test_split(x_rest, y_rest, test_size=0.3, random_state=0)


def bias_bench_first_classifier(x: np.ndarray, y: np.ndarray):
    """The first iteration of ``get_debiasing_projection`` with bias-bench's settings: the
    classifier's weights and its dev accuracy."""
    from sklearn.svm import LinearSVC

    x_train, x_dev, y_train, y_dev = bias_bench_split(x, y)
    dropout_scale = 1.0 / (1 - 0 + 1e-6)
    classifier = LinearSVC(fit_intercept=False, class_weight=None, dual=False, random_state=0)
    classifier.fit(x_train * dropout_scale, y_train)
    return np.atleast_2d(classifier.coef_), classifier.score(x_dev, y_dev)


def bias_bench_data(pairs, docs):
    """Sentences and labels as bias-bench stacks them: male (1), female (0), neutral (−1)."""
    selected = bias_bench_inlp(docs, pairs.pairs, PER_CLASS, seed=CLIP_SEED)
    sentences = selected["male"] + selected["female"] + selected["neutral"]
    labels = np.concatenate([np.ones(len(selected["male"]), dtype=int),
                             np.zeros(len(selected["female"]), dtype=int),
                             -np.ones(len(selected["neutral"]), dtype=int)])  # fmt: skip
    return sentences, labels


@pytest.fixture(scope="module")
def reference():
    """The default gender map, the development documents, and bias-bench's sentences and
    labels on them."""
    pairs, docs = load_fit_pairs(), documents()
    return pairs, docs, *bias_bench_data(pairs, docs)


@pytest.fixture(scope="module", params=["bert", "roberta"])
def parity_model(request, tmp_path_factory, reference):
    """A seeded tiny model with BERT-base's feed-forward width (3,072), so the encoder's
    batches are cut at BERT-base's 341 padded tokens as in a real fit (RoBERTa too, whose
    padding id and position offsets differ from BERT's); its scorer, and bias-bench's
    features of the reference sentences."""
    from tiny_models import tiny_masked_lm
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from cdsbias.scoring import MaskedLMScorer
    from cdsbias.scoring.batching import max_batch_tokens

    folder = tiny_masked_lm(request.param, tmp_path_factory.mktemp(request.param) / "model",
                            intermediate=3072)  # fmt: skip
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    assert max_batch_tokens(model) == 341
    scorer = MaskedLMScorer(model, AutoTokenizer.from_pretrained(folder), batch_size=32)
    return scorer, bias_bench_features(folder, reference[2])


def test_sentences_labels_and_split_equal_bias_bench(reference):
    pairs, docs, sentences, labels = reference
    chosen = select_inlp_sentences(docs, pairs, per_class=PER_CLASS, min_per_class=1,
                                   seed=CLIP_SEED)  # fmt: skip
    ours, our_labels = chosen.labelled()
    assert chosen.counts() == {"male": PER_CLASS, "female": PER_CLASS, "neutral": PER_CLASS}
    assert ours == sentences
    np.testing.assert_array_equal(our_labels, labels)
    # The split, on row numbers: the same rows in train and dev, in the same order.
    rows = np.arange(len(labels), dtype=float)[:, None]
    train, train_y, dev, dev_y = inlp_split(rows, np.asarray(our_labels))
    bb_train, bb_dev, bb_train_y, bb_dev_y = bias_bench_split(rows, labels)
    np.testing.assert_array_equal(train, bb_train)
    np.testing.assert_array_equal(dev, bb_dev)
    np.testing.assert_array_equal(train_y, bb_train_y)
    np.testing.assert_array_equal(dev_y, bb_dev_y)


def test_features_equal_bias_bench_loop(reference, parity_model):
    scorer, expected = parity_model
    got = inlp_features(scorer, reference[2])
    assert got.shape == expected.shape == (len(reference[2]), scorer.model.config.hidden_size)
    tolerance = FEATURE_TOLERANCE_EPS * EPS32 * float(np.abs(expected).max())
    np.testing.assert_allclose(got, expected, rtol=0, atol=tolerance)


def test_first_direction_equals_bias_bench(reference, parity_model):
    """One INLP iteration through the fit every run uses (selection, encoding, split,
    classifier) removes the row space of bias-bench's first classifier."""
    from scipy.linalg import orth, subspace_angles

    pairs, docs, _, labels = reference
    scorer, features = parity_model
    weights, accuracy = bias_bench_first_classifier(features, labels)
    erasure = fit_posthoc(scorer, docs, "inlp", pairs=pairs, iterations=1, per_class=PER_CLASS,
                          min_per_class=1, seed=CLIP_SEED)  # fmt: skip
    expected = orth(weights.T)  # bias-bench's get_rowspace_projection basis
    assert erasure.rank_removed == expected.shape[1] == 3  # one row per class
    removed = orth(np.eye(erasure.hidden_size) - erasure.projection)
    assert float(np.sin(subspace_angles(removed, expected)).max()) < DIRECTION_TOLERANCE
    assert erasure.dev_accuracy == [pytest.approx(accuracy, abs=1e-12)]
    assert erasure.details["labels"] == {"male": 1, "female": 0, "neutral": -1}
