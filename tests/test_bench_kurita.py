"""Kurita et al. (2019) scores and WEAT tests, against hand computations from model logits."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from cdsbias.benchmarks import list_benchmarks
from cdsbias.benchmarks.kurita import Kurita, bias_score
from cdsbias.benchmarks.kurita_data import load_word_lists
from cdsbias.benchmarks.stats import effect_size, permutation_p_value
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

ASSETS = Path(__file__).parent / "assets" / "kurita"


def _load(folder: Path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    return AutoModelForMaskedLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(
        folder
    )


def _mask_log_probs(model, tokenizer, text: str) -> tuple[torch.Tensor, list[int], torch.Tensor]:
    """Direct forward pass: log-softmax rows at every [MASK], and the raw logits."""
    encoding = tokenizer(text.replace("[MASK]", tokenizer.mask_token), return_tensors="pt")
    with torch.no_grad():
        logits = model(**encoding).logits[0].double()
    positions = (encoding["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist()
    return torch.log_softmax(logits, dim=-1), positions, logits


def _lp(model, tokenizer, text: str, word: str, mask: int = 0) -> float:
    log_probs, positions, _ = _mask_log_probs(model, tokenizer, text)
    return float(log_probs[positions[mask], tokenizer.convert_tokens_to_ids(word)])


@pytest.fixture(scope="module")
def tiny(tiny_bert):
    model, tokenizer = _load(tiny_bert)
    return MaskedLMScorer.from_pretrained(str(tiny_bert)), model, tokenizer


def test_bias_score_matches_logits_gender_first(tiny):
    scorer, model, tok = tiny
    got = bias_score(scorer, "GGG is a XXX.", ("he", "she"), "nurse")
    lp, pos, logits = _mask_log_probs(model, tok, "[MASK] is a nurse.")
    he, she = tok.convert_tokens_to_ids(["he", "she"])
    bias = float(lp[pos[0], he] - lp[pos[0], she])
    # One word per side: the log-probability difference is the logit difference.
    assert bias == pytest.approx(float(logits[pos[0], he] - logits[pos[0], she]), abs=1e-9)
    prior = _lp(model, tok, "[MASK] is a [MASK].", "he") - _lp(
        model, tok, "[MASK] is a [MASK].", "she"
    )
    target = _lp(model, tok, "he is a [MASK].", "nurse") - _lp(
        model, tok, "she is a [MASK].", "nurse"
    )
    assert got["gender_fill_bias"] == pytest.approx(bias, abs=1e-4)
    assert got["gender_fill_prior_correction"] == pytest.approx(prior, abs=1e-4)
    assert got["gender_fill_bias_prior_corrected"] == pytest.approx(bias - prior, abs=1e-4)
    assert got["target_fill_bias"] == pytest.approx(target, abs=1e-4)


def test_bias_score_gender_after_attribute_and_multi_piece_attribute(tiny):
    scorer, model, tok = tiny
    assert tok.tokenize("nurses") == ["nurse", "##s"]
    got = bias_score(scorer, "the XXX is a GGG.", ("man", "woman"), "nurses")
    bias = _lp(model, tok, "the nurses is a [MASK].", "man") - _lp(
        model, tok, "the nurses is a [MASK].", "woman"
    )
    # The gender slot is the *second* mask of the prior sentence.
    prior = _lp(model, tok, "the [MASK] is a [MASK].", "man", mask=1) - _lp(
        model, tok, "the [MASK] is a [MASK].", "woman", mask=1
    )
    wrong_slot = _lp(model, tok, "the [MASK] is a [MASK].", "man", mask=0) - _lp(
        model, tok, "the [MASK] is a [MASK].", "woman", mask=0
    )
    assert abs(prior - wrong_slot) > 1e-3

    def chain(gender: str) -> float:  # ln P(nurse ##s | ...) by the chain rule
        first = _lp(model, tok, f"the [MASK] [MASK] is a {gender}.", "nurse", mask=0)
        second = _lp(model, tok, f"the nurse [MASK] is a {gender}.", "##s", mask=0)
        return first + second

    assert got["gender_fill_bias"] == pytest.approx(bias, abs=1e-4)
    assert got["gender_fill_prior_correction"] == pytest.approx(prior, abs=1e-4)
    assert got["target_fill_bias"] == pytest.approx(chain("man") - chain("woman"), abs=1e-4)
    assert math.isfinite(got["target_fill_bias"])


def test_bias_score_sums_probabilities_of_word_lists(tiny):
    scorer, model, tok = tiny
    got = bias_score(scorer, "GGG is a XXX.", (["man", "men"], ["woman", "women"]), "nurse")
    lp, pos, _ = _mask_log_probs(model, tok, "[MASK] is a nurse.")
    ids = dict(
        zip(
            ["man", "men", "woman", "women"],
            tok.convert_tokens_to_ids(["man", "men", "woman", "women"]),
            strict=True,
        )
    )
    male = math.log(math.exp(lp[pos[0], ids["man"]]) + math.exp(lp[pos[0], ids["men"]]))
    female = math.log(math.exp(lp[pos[0], ids["woman"]]) + math.exp(lp[pos[0], ids["women"]]))
    probs = {w: math.exp(_lp(model, tok, f"{w} is a [MASK].", "nurse")) for w in ids}
    target = math.log((probs["man"] + probs["men"]) / 2) - math.log(
        (probs["woman"] + probs["women"]) / 2
    )
    assert got["gender_fill_bias"] == pytest.approx(male - female, abs=1e-4)
    assert got["target_fill_bias"] == pytest.approx(target, abs=1e-4)


@pytest.mark.parametrize(
    "template", ["GGG is a GGG XXX.", "GGG is a nurse.", "XXX XXX GGG", "nothing here"]
)
def test_bad_template_is_a_clear_error(tiny, template):
    with pytest.raises(CdsbiasError, match="exactly once"):
        bias_score(tiny[0], template, ("he", "she"), "nurse")


def test_attribute_outside_vocabulary_is_an_error(tiny):
    with pytest.raises(CdsbiasError, match="unknown token"):
        bias_score(tiny[0], "GGG is a XXX.", ("he", "she"), "zebra")


def test_effect_size_and_permutation_test_by_hand():
    x = np.array([1.0, 2.0, 3.5])
    y = np.array([4.0, 5.0, 6.0, 7.5])
    pooled = np.concatenate([x, y])
    expected = (x.mean() - y.mean()) / (np.std(pooled, ddof=1) + 1e-8)
    assert effect_size(x, y) == pytest.approx(expected)
    observed = abs(x.mean() - y.mean())
    splits = list(itertools.combinations(range(7), 3))
    exact = np.mean(
        [
            abs(pooled[list(c)].mean() - np.delete(pooled, list(c)).mean()) > observed + 1e-12
            for c in splits
        ]
    )
    got = permutation_p_value(x, y, permutations=200_000, seed=1)
    assert got == pytest.approx(exact, abs=0.005)
    assert permutation_p_value(x, y, permutations=1000, seed=3) == permutation_p_value(
        x, y, permutations=1000, seed=3
    )


def test_packaged_word_lists():
    sets, templates, tests = load_word_lists()
    assert {len(sets[s]) for s in ("career", "family", "math", "arts", "science")} == {8}
    assert len(sets["pleasant"]) == len(sets["unpleasant"]) == 25
    assert list(tests["test"]) == [
        "career_family",
        "math_arts",
        "science_arts",
        "pleasant_unpleasant",
    ]
    assert (templates["template"].str.count("GGG") == 1).all()


def test_malformed_attribute_file_reports_file_and_line(tmp_path):
    bad = tmp_path / "attributes.tsv"
    bad.write_text("set\tword\ncareer\texecutive\ncareer executive\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"attributes\.tsv:3"):
        Kurita(data_file=bad).load()
    with pytest.raises(CdsbiasError, match="Unknown kurita test"):
        Kurita(tests="career_famly").load()


def test_benchmark_effect_size_p_value_and_rows(real_vocab_bert):
    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert))
    model, tok = _load(real_vocab_bert)
    bench = Kurita(
        data_file=ASSETS / "attributes.tsv",
        tests="career_family,pleasant_unpleasant",
        permutations=20_000,
    )
    rows = bench.load()
    assert len(rows) == 6 * 3 + 5 * 2
    scored = bench.score(scorer, rows)
    # One row by hand: summed plural targets, prior at the gender slot.
    row = scored[(scored["template"] == "GGG like XXX.") & (scored["attribute"] == "salary")].iloc[
        0
    ]
    text, bland = "[MASK] like salary.", "[MASK] like [MASK]."

    def side(sentence: str, words: list[str]) -> float:
        lp, pos, _ = _mask_log_probs(model, tok, sentence)
        return math.log(sum(math.exp(lp[pos[0], tok.convert_tokens_to_ids(w)]) for w in words))

    expected = (side(text, ["boys", "men"]) - side(text, ["girls", "women"])) - (
        side(bland, ["boys", "men"]) - side(bland, ["girls", "women"])
    )
    assert row["gender_fill_bias_prior_corrected"] == pytest.approx(expected, abs=1e-4)
    # Multi-piece attributes ("filth", "pollute") still get a target_fill_bias.
    assert np.isfinite(scored["target_fill_bias"]).all()
    summary, metrics = bench.summarize(scored)
    career = scored[scored["test"] == "career_family"]
    x = career[career["side"] == "x"]["gender_fill_bias_prior_corrected"].to_numpy()
    y = career[career["side"] == "y"]["gender_fill_bias_prior_corrected"].to_numpy()
    assert metrics["career_family_effect_size"] == pytest.approx(
        (x.mean() - y.mean()) / (np.concatenate([x, y]).std(ddof=1) + 1e-8)
    )
    pooled = np.concatenate([x, y])
    observed = abs(x.mean() - y.mean())
    total = pooled.sum()
    sums = np.array([pooled[list(c)].sum() for c in itertools.combinations(range(18), 9)])
    exact = np.mean(np.abs(sums / 9 - (total - sums) / 9) > observed + 1e-12)
    assert metrics["career_family_p_value"] == pytest.approx(exact, abs=0.015)
    assert summary["tests"]["career_family"]["n_x"] == 9
    assert "career_family" in bench.format_report(summary)

    filtered = Kurita(
        data_file=ASSETS / "attributes.tsv", tests="pleasant_unpleasant", vocab_filter="true"
    )
    summary, _ = filtered.summarize(filtered.score(scorer, filtered.load()))
    result = summary["tests"]["pleasant_unpleasant"]
    assert result["dropped_multi_piece"] == 4  # filth, pollute x 2 templates
    assert (result["n_x"], result["n_y"]) == (4, 2)


def test_registry_lists_every_benchmark_with_description():
    listed = list_benchmarks()
    for name in ("kurita", "winobias", "dawinobias"):
        assert name in listed
        assert len(listed[name]) > 30


def test_multi_piece_attribute_words_warn_with_what_was_measured(real_vocab_bert, tmp_path):
    danish = tmp_path / "attributes.tsv"
    danish.write_text(
        "set\tword\ncareer\tledelse\ncareer\tlønseddel\nfamily\tforældre\nfamily\tbryllup\n",
        encoding="utf-8",
    )
    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert))
    bench = Kurita(data_file=danish, tests="career_family", permutations=100)
    with pytest.warns(UserWarning, match="100% of the attribute words are several word pieces"):
        scored = bench.score(scorer, bench.load())
    assert (scored["attribute_pieces"] > 1).all()
    # The warning says what the split means for the scores and what to do, not a guess
    # about the model's language (small English vocabularies split words too).
    with pytest.warns(UserWarning) as record:
        bench.score(scorer, bench.load())
    message = str(record[0].message)
    assert "chain-rule products" in message and "vocab_filter=true" in message
    assert "not an English model" not in message
