"""Selection → encoding → fit → fold on a tiny MLM with a gender direction planted in it."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cdsbias.errors import CdsbiasError
from cdsbias.methods.fit_sentences import WordPairs
from cdsbias.methods.head_fold import fold, head_layer
from cdsbias.train.posthoc_fit import clip_to_tokens, fit_posthoc

# Words that are one piece in the tiny BERT's vocabulary, so the planting hook finds them.
PAIRS = WordPairs(
    (("he", "she"), ("boy", "girl"), ("brother", "sister"), ("father", "mother")), "test pairs"
)
OCCUPATIONS = ["nurse", "engineer", "roofer", "mason", "judge", "clerk", "teacher", "doctor",
               "secretary", "manager", "director", "assistant", "taper", "mail clerk"]  # fmt: skip
NEUTRAL = ["the clerk", "a teacher", "the manager", "my assistant", "the judge", "this person",
           "the doctor", "that nurse"]  # fmt: skip
VERBS = ["works as a", "wants to become a", "applied for the position of", "is a", "had a day as a"]
PLACES = ["at work", "at the school", "for a good day", "this day", "at the position", ""]


def corpus(n: int, seed: int) -> tuple[list[str], list[int]]:
    """Sentences of three kinds: with a male word (1), a female word (0), neither (-1)."""
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        label = (1, 0, -1)[i % 3]
        if label == -1:
            subject = rng.choice(NEUTRAL)
        else:
            word = rng.choice(PAIRS.pairs)[0 if label == 1 else 1]
            subject = (
                word if word in ("he", "she") else rng.choice(["my", "this", "the"]) + " " + word
            )
        words = [subject.capitalize(), rng.choice(VERBS), rng.choice(OCCUPATIONS)]
        texts.append(" ".join([*words, rng.choice(PLACES)]).strip() + ".")
        labels.append(label)
    return texts, labels


def plant(model, tokenizer, strength: float = 3.0):
    """Makes ``strength·u`` the model's only gender signal.

    Each female word's input embedding is set to its male counterpart's, so a sentence and
    its gender-swapped twin get the same base output; a hook then removes every token
    state's component along ``u`` and adds ±strength·u to the states of sentences holding a
    male (+) or female (−) word. Removing the component first keeps a pair's two states
    the same length: SentenceDebias L2-normalises its features (bias-bench), and a plain
    ``h ± strength·u`` has ``|h + s·u| ≠ |h − s·u|`` whenever ``⟨h, u⟩ ≠ 0``, so the
    normalised pair difference would lean toward ``h`` and its first principal component
    would miss ``u`` by a few degrees (|cos| 0.9994 on this model) — enough for the probe.
    """
    import torch

    ids = {side: {tokenizer.convert_tokens_to_ids(w) for w in words}
           for side, words in (("male", PAIRS.male), ("female", PAIRS.female))}  # fmt: skip
    embeddings = model.get_input_embeddings().weight
    with torch.no_grad():
        for male, female in PAIRS.pairs:
            embeddings[tokenizer.convert_tokens_to_ids(female)] = embeddings[
                tokenizer.convert_tokens_to_ids(male)
            ]
    size = model.config.hidden_size
    u = torch.from_numpy(np.random.default_rng(7).normal(size=size)).float()
    u = u / u.norm()

    def add(module, inputs, output):
        input_ids = inputs[0] if inputs else None
        if input_ids is None:  # called with keywords only
            return None
        sign = torch.zeros(input_ids.shape[0])
        for row, sentence in enumerate(input_ids.tolist()):
            if ids["male"] & set(sentence):
                sign[row] = 1.0
            elif ids["female"] & set(sentence):
                sign[row] = -1.0
        hidden = output["last_hidden_state"]
        hidden = hidden - (hidden @ u)[..., None] * u
        output["last_hidden_state"] = hidden + strength * sign[:, None, None] * u
        return output

    def add_kwargs(module, args, kwargs, output):
        return add(module, (kwargs.get("input_ids", args[0] if args else None),), output)

    model.base_model.register_forward_hook(add_kwargs, with_kwargs=True)
    return u


def head_features(scorer, texts) -> np.ndarray:
    """Mean over tokens of what the MLM head's first layer outputs."""
    import torch

    captured = []
    handle = head_layer(scorer.model).register_forward_hook(
        lambda module, inputs, output: captured.append(output)
    )
    rows = []
    try:
        with torch.inference_mode():
            for text in texts:
                batch = scorer.tokenizer(text, return_tensors="pt")
                scorer.model(**batch)
                rows.append(captured.pop().mean(dim=1)[0].double().numpy())
    finally:
        handle.remove()
    return np.stack(rows)


def probe(train_x, train_y, test_x, test_y) -> float:
    from sklearn.linear_model import LogisticRegression

    train_y, test_y = np.asarray(train_y), np.asarray(test_y)
    keep, held = train_y >= 0, test_y >= 0
    model = LogisticRegression(max_iter=5000).fit(train_x[keep], train_y[keep])
    return float(model.score(test_x[held], test_y[held]))


@pytest.fixture(scope="module")
def planted_scorer(zoo):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from cdsbias.scoring import MaskedLMScorer

    def build():
        model = AutoModelForMaskedLM.from_pretrained(zoo["bert"]).eval()
        tokenizer = AutoTokenizer.from_pretrained(zoo["bert"])
        u = plant(model, tokenizer)
        return MaskedLMScorer(model, tokenizer, batch_size=32), u.double().numpy()

    return build


# INLP: bias-bench's LinearSVC has no intercept, so on these uncentred features each
# classifier's weights mix the planted direction with the features' mean; on a 32-wide
# model ten iterations (30 directions) remove it. SentenceDebias: bias-bench's default of
# one component (see plant() for why the pair states keep their length).
@pytest.mark.parametrize(
    ("method", "options"), [("inlp", {"iterations": 10}), ("leace", {}), ("sentence_debias", {})]
)
def test_pipeline_brings_the_probe_to_chance(planted_scorer, method, options):
    scorer, u = planted_scorer()
    fit_texts, _ = corpus(1500, seed=0)
    train_texts, train_y = corpus(300, seed=1)
    test_texts, test_y = corpus(300, seed=2)
    before = probe(head_features(scorer, train_texts), train_y,
                   head_features(scorer, test_texts), test_y)  # fmt: skip
    erasure = fit_posthoc(
        scorer, iter(fit_texts), method, pairs=PAIRS, per_class=500, min_per_class=50, **options
    )
    fold(scorer.model, erasure)
    after = probe(head_features(scorer, train_texts), train_y,
                  head_features(scorer, test_texts), test_y)  # fmt: skip
    assert before >= 0.95
    assert after <= 0.60, (method, before, after)
    record = erasure.record()
    assert record["details"]["word_pairs"]["hash"] == PAIRS.hash
    if method == "sentence_debias":
        assert record["sentences_per_class"] == {"pairs": 1000}
        assert record["rank_removed"] == 1
        assert abs(np.array(record["details"]["components"][0]) @ u) >= 0.999
    else:
        counts = record["sentences_per_class"]
        assert counts["neutral"] == 500 and min(counts.values()) > 400
    if method == "leace":
        assert record["rank_removed"] <= 2


def test_unknown_method_suggests_the_nearest(planted_scorer):
    with pytest.raises(CdsbiasError, match="Did you mean 'inlp'"):
        fit_posthoc(planted_scorer()[0], [], "inpl")


def test_clip_to_tokens_cuts_as_truncation_does(zoo):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(zoo["roberta"])
    long = "the judge told the clerk that his decision was final " * 20
    short = "he is a nurse."
    clipped = clip_to_tokens(tokenizer, [long, short], 16)
    assert clipped[1] == short
    assert long.startswith(clipped[0]) and len(clipped[0]) < len(long)
    assert len(tokenizer(clipped[0])["input_ids"]) <= 16
    assert clip_to_tokens(tokenizer, [long], None) == [long]


def test_inlp_splits_with_bias_bench_seed_0_whatever_the_runs_seed(planted_scorer):
    """bias-bench draws INLP's sentence clipping from its --seed but always splits train/dev
    with random_state=0; so does a run (inlp_split_seed: 0), and the key moves the split."""
    from cdsbias.methods import plan_from_values
    from cdsbias.methods.inlp_fit import inlp_projection

    plan = plan_from_values({"posthoc_method": "inlp"})
    assert plan.posthoc.fit_arguments()["split_seed"] == 0
    moved = plan_from_values({"posthoc_method": "inlp", "inlp_split_seed": 2})
    assert moved.posthoc.fit_arguments()["split_seed"] == 2
    scorer, _ = planted_scorer()
    fit_texts, _ = corpus(300, seed=0)
    arguments = {"pairs": PAIRS, "per_class": 100, "min_per_class": 50, "iterations": 2}
    run_seed_3 = fit_posthoc(scorer, iter(fit_texts), "inlp", seed=3, **arguments)
    assert run_seed_3.details["split_seed"] == 0
    split_2 = fit_posthoc(scorer, iter(fit_texts), "inlp", seed=3, split_seed=2, **arguments)
    assert split_2.details["split_seed"] == 2
    assert not np.allclose(run_seed_3.projection, split_2.projection)
    # The same fit as bias-bench's split of the same features (seed 0).
    from cdsbias.methods.fit_sentences import select_inlp_sentences
    from cdsbias.scoring.embeddings import encode_sentences

    chosen = select_inlp_sentences(iter(fit_texts), PAIRS, per_class=100, min_per_class=50, seed=3)
    sentences, labels = chosen.labelled()
    clipped = clip_to_tokens(scorer.tokenizer, sentences, scorer.max_length)
    features = encode_sentences(scorer, clipped)
    reference = inlp_projection(features, np.asarray(labels), iterations=2, seed=0)
    np.testing.assert_array_equal(run_seed_3.projection, reference.projection)
