"""Fit sentences for SentenceDebias and INLP, against bias-bench's selection code."""

from __future__ import annotations

import json
import random

import pytest

from cdsbias.errors import CdsbiasError
from cdsbias.methods.fit_sentences import (
    WordPairs,
    load_fit_pairs,
    select_counterfactual_pairs,
    select_inlp_sentences,
)
from cdsbias.train.units import split_sentences

PAIRS = WordPairs((("he", "she"), ("man", "woman"), ("his", "her")), "test")


def bias_bench_inlp(documents, pairs, n_sentences, seed=0):
    """bias-bench's ``_load_gender_data`` loop, transcribed (its nltk splitter and whole-file
    shuffle replaced by the project's splitter and the given order)."""
    random.seed(seed)
    male_set = {m for m, _ in pairs}
    female_set = {f for _, f in pairs}
    male_sentences, female_sentences = [], []
    out = {"male": [], "female": [], "neutral": []}
    for line in documents:
        for sentence in split_sentences(line):
            male_flag = female_flag = False
            idx = -1
            tokens = [token.lower() for token in sentence.split(" ")]
            if len(tokens) < 5:
                continue
            for token in tokens:
                if token in male_set:
                    male_flag = True
                    idx = tokens.index(token)
                if token in female_set:
                    female_flag = True
                    idx = tokens.index(token)
                if male_flag and female_flag:
                    break
            if not male_flag and not female_flag and len(out["neutral"]) < n_sentences:
                index = random.randint(4, len(tokens))
                out["neutral"].append(" ".join(tokens[:index]))
                continue
            if male_flag and female_flag:
                continue
            if male_flag and len(out["male"]) < n_sentences and sentence not in male_sentences:
                male_sentences.append(sentence)
                index = random.randint(idx, len(tokens))
                out["male"].append(" ".join(tokens[: index + 1]))
            if female_flag and len(out["female"]) < n_sentences:  # noqa: SIM102 - as written
                if sentence not in female_sentences:
                    female_sentences.append(sentence)
                    index = random.randint(idx, len(tokens))
                    out["female"].append(" ".join(tokens[: index + 1]))
        if len(out["male"]) == len(out["female"]) == len(out["neutral"]) == n_sentences:
            break
    return out


def documents(n: int = 60, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    subjects = ["He", "She", "The man", "The woman", "The clerk", "A teacher", "The judge"]
    rest = ["works as a nurse at the school", "told his sister about her day", "had a good day",
            "wants to become a doctor in the city", "is a mason and a roofer"]  # fmt: skip
    return [
        " ".join(f"{rng.choice(subjects)} {rng.choice(rest)}." for _ in range(rng.randint(1, 4)))
        for _ in range(n)
    ]


@pytest.mark.parametrize("per_class", [5, 20, 1000])
def test_inlp_selection_equals_bias_bench(per_class):
    docs = documents()
    expected = bias_bench_inlp(docs, PAIRS.pairs, per_class, seed=3)
    chosen = select_inlp_sentences(docs, PAIRS, per_class=per_class, min_per_class=1, seed=3)
    assert chosen.male == expected["male"]
    assert chosen.female == expected["female"]
    assert chosen.neutral == expected["neutral"]
    assert max(chosen.counts().values()) <= per_class


def test_inlp_selection_by_hand():
    docs = [
        "He said so.",  # 3 words: skipped
        "He met the man at work today.",  # male, gendered word kept by the clip
        "He met the man at work today.",  # duplicate male sentence: once
        "She told her brother the news.",  # female
        "He and she went to the market.",  # both sides: skipped
        "Then the guard saw he. Nobody was there at all.",  # "he." is not a word match
    ]
    chosen = select_inlp_sentences(docs, PAIRS, min_per_class=1)
    assert len(chosen.male) == 1 and chosen.male[0].startswith("he")
    assert len(chosen.female) == 1 and chosen.female[0].startswith("she")
    assert all(not s.startswith("he and") for s in chosen.male + chosen.female)
    # Both sentences of the last document are neutral, clipped to at least 4 words.
    assert len(chosen.neutral) == 2
    assert chosen.neutral[0].startswith("then the guard saw")
    sentences, labels = chosen.labelled()
    assert labels == [1, 0, -1, -1] and len(sentences) == 4


def test_inlp_reads_a_stream_only_as_far_as_needed():
    docs = documents(200)
    consumed = []

    def stream():
        for doc in docs:
            consumed.append(doc)
            yield doc

    chosen = select_inlp_sentences(stream(), PAIRS, per_class=3, min_per_class=1)
    assert chosen.counts() == {"male": 3, "female": 3, "neutral": 3}
    assert len(consumed) < len(docs)


def test_too_few_and_no_pair_errors_say_what_was_found():
    docs = ["He met the man at work today.", "The clerk had a good day at work."]
    with pytest.raises(CdsbiasError, match=r"1 male, 0 female, 1 neutral .*=100 per class"):
        select_inlp_sentences(docs, PAIRS)
    # Each class found something: the message names the key that lowers the minimum and
    # the value at which this corpus would fit.
    docs += ["She told her brother the news.", "She told her sister the news too."]
    with pytest.raises(CdsbiasError) as caught:
        select_inlp_sentences(docs, PAIRS, per_class=50, min_per_class=3)
    assert str(caught.value) == (
        "INLP found too few fit sentences: 1 male, 2 female, 1 neutral "
        "(posthoc_min_sentences_per_class=3 per class needed, posthoc_sentences_per_class=50 "
        "wanted); use a larger corpus, or lower posthoc_min_sentences_per_class (e.g. "
        "posthoc_min_sentences_per_class=1) to fit on what it has."
    )
    with pytest.raises(CdsbiasError, match="None of the 3 word pairs"):
        select_inlp_sentences(["The clerk had a good day at work."], PAIRS)
    with pytest.raises(CdsbiasError, match="None of the 3 word pairs"):
        select_counterfactual_pairs(["The clerk had a good day at work."], PAIRS)
    with pytest.raises(CdsbiasError, match="text column"):
        select_inlp_sentences([{"text": "He"}], PAIRS)


def test_counterfactual_pairs_by_hand():
    chosen = select_counterfactual_pairs(
        ["He told his friend. The clerk left. She is a woman."], PAIRS
    )
    # "woman." keeps its full stop, so only "she" makes the third sentence a pair.
    assert list(zip(chosen.male, chosen.female)) == [
        ("he told his friend.", "she told his friend."),
        ("he told his friend.", "he told her friend."),
        ("he is a woman.", "she is a woman."),
    ]
    capped = select_counterfactual_pairs(["He told his friend."] * 5, PAIRS, max_pairs=3)
    assert len(capped) == 3


def test_default_pairs_are_the_cds_pairs_plus_bias_bench_pronouns():
    pairs = load_fit_pairs()
    assert ("he", "she") in pairs.pairs and ("actor", "actress") in pairs.pairs
    assert ("heir", "heiress") in pairs.pairs  # an f2m line still pairs male with female
    assert ("him", "her") in pairs.pairs and ("his", "her") in pairs.pairs
    assert not pairs.male & pairs.female
    assert len(pairs.hash) == 12 and pairs.hash == load_fit_pairs().hash


def test_bias_bench_json_and_bad_files(tmp_path):
    good = tmp_path / "words.json"
    good.write_text(json.dumps({"gender": [["Actor", "actress"], ["he", "she"]]}))
    pairs = load_fit_pairs(good)
    assert pairs.pairs == (("actor", "actress"), ("he", "she"))
    assert pairs.hash != load_fit_pairs().hash
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"gender": [["a", "b", "c"]]}))
    with pytest.raises(CdsbiasError, match="entry 1"):
        load_fit_pairs(bad)
    bad.write_text(json.dumps({"race": []}))
    with pytest.raises(CdsbiasError, match='"gender"'):
        load_fit_pairs(bad)
    bad.write_text("{")
    with pytest.raises(CdsbiasError, match="not valid JSON"):
        load_fit_pairs(bad)
    with pytest.raises(CdsbiasError, match="not found"):
        load_fit_pairs(tmp_path / "missing.json")
