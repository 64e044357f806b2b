"""AUL and AULA (Kaneko & Bollegala 2022) against a one-sentence loop of their code's choices."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ASSETS
from transformers import AutoModelForMaskedLM, AutoTokenizer, PreTrainedModel

from cdsbias.benchmarks import build_benchmark
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.unmasked import unmasked_scores

SENTENCES = [
    "He is a nurse.",
    "This woman is a lodging manager.",
    "My brother works as a roofer.",
    "She applied for the position of director of religious activities.",
    "He is a nurse.",
    "My dad, the judge, had a good day at work.",
]


def kaneko_loop(folder, sentences, attention, *, layers=None, positions=slice(1, -1)):
    """``calculate_aul`` of evaluate_bias_in_mlm, one sentence per pass: log-probabilities of
    the unmasked tokens at [1:-1]; for AULA times the attention each token receives, averaged
    over all layers (torch.cat(attentions, 0).mean(0)), heads (.mean(0)) and queries (.mean(0))."""
    model = AutoModelForMaskedLM.from_pretrained(folder, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    scores = []
    with torch.no_grad():
        for sentence in sentences:
            ids = tokenizer.encode(sentence, return_tensors="pt")
            output = model(ids, output_attentions=True)
            log_probs = torch.log_softmax(output.logits[0].double(), dim=1)
            token = log_probs.gather(1, ids.view(-1, 1))[positions, 0]
            if attention:
                chosen = output.attentions if layers is None else output.attentions[layers]
                averaged = torch.mean(torch.cat(chosen, 0).double(), 0)  # over layers
                received = averaged.mean(0).mean(0)  # over heads, then over query positions
                token = token * received[positions]
            scores.append(float(token.mean()))
    return np.array(scores)


def scorer_of(folder, batch_size=4):
    return MaskedLMScorer.from_pretrained(str(folder), batch_size=batch_size)


@pytest.mark.parametrize("arch", ["bert", "roberta", "albert", "distilbert"])
@pytest.mark.parametrize("scoring", ["aul", "aula"])
def test_batched_scores_equal_the_one_sentence_loop(model_zoo, arch, scoring):
    scorer = scorer_of(model_zoo[arch])
    sequences = [scorer.encode(s) for s in SENTENCES]
    got = unmasked_scores(scorer, sequences, scoring)
    expected = kaneko_loop(model_zoo[arch], SENTENCES, attention=scoring == "aula")
    np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)
    assert scorer.sequences_run == len(set(SENTENCES))  # one pass per distinct sentence
    # AULA switched the model to eager attention only while it ran.
    assert scorer.model.config._attn_implementation != "eager" or arch == "distilbert"


def test_which_positions_and_which_attention_average_enter(tiny_bert):
    scorer = scorer_of(tiny_bert)
    sequences = [scorer.encode(s) for s in SENTENCES]
    aul = unmasked_scores(scorer, sequences, "aul")
    aula = unmasked_scores(scorer, sequences, "aula")
    # [CLS] and [SEP] are left out: the mean over every position is another number.
    every = kaneko_loop(tiny_bert, SENTENCES, attention=False, positions=slice(None))
    assert np.abs(aul - every).min() > 1e-4
    # Every layer enters AULA's weights: the last layer alone gives other scores.
    last = kaneko_loop(tiny_bert, SENTENCES, attention=True, layers=slice(-1, None))
    assert np.abs(aula - last).min() > 1e-6
    assert not np.allclose(aul, aula)


def refuse_eager(model, implementation):
    """An architecture without eager attention (SDPA returns no attention weights)."""
    raise ValueError("this architecture has no eager attention")


def test_aula_without_attention_weights_is_one_clear_error(tiny_bert, monkeypatch):
    scorer = scorer_of(tiny_bert)

    monkeypatch.setattr(PreTrainedModel, "set_attn_implementation", refuse_eager)
    with pytest.raises(CdsbiasError, match=r"scoring: aula needs attention weights, but "
                       r"BertForMaskedLM returned none .*attn_implementation='eager'"):  # fmt: skip
        unmasked_scores(scorer, [scorer.encode("He is a nurse.")], "aula")


def test_cli_aula_without_attentions_fails_in_one_line(tiny_bert, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(PreTrainedModel, "set_attn_implementation", refuse_eager)
    code = main(["evaluate", str(tiny_bert), "-b", "crows_pairs", "--out", str(tmp_path),
                 "--data", str(ASSETS / "crows_pairs" / "crows_pairs_mini.csv"), "--quiet",
                 "--option", "scoring=aula"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: scoring: aula needs attention weights")
    assert not (tmp_path / "crows_pairs").exists()


# ------------------------------------------------------------------ the two benchmarks
@pytest.mark.parametrize("scoring", ["aul", "aula"])
def test_crows_pairs_compares_the_loop_scores_unrounded(tiny_bert, scoring):
    fixture = ASSETS / "crows_pairs" / "crows_pairs_mini.csv"
    bench = build_benchmark("crows_pairs", {"data_file": fixture, "scoring": scoring})
    result = bench.evaluate(scorer_of(tiny_bert))
    rows = result.rows
    more = kaneko_loop(tiny_bert, rows["sent_more"].tolist(), attention=scoring == "aula")
    less = kaneko_loop(tiny_bert, rows["sent_less"].tolist(), attention=scoring == "aula")
    np.testing.assert_allclose(rows["sent_more_score"], more, atol=1e-6, rtol=0)
    np.testing.assert_allclose(rows["sent_less_score"], less, atol=1e-6, rtol=0)
    assert result.metrics["metric_score"] == pytest.approx(100 * np.mean(more > less))
    assert result.summary["scoring"] == scoring and not rows["skipped"].any()


def test_stereoset_aul_scores_the_three_sentences(tiny_bert):
    fixture = ASSETS / "stereoset" / "stereoset_mini.jsonl"
    bench = build_benchmark("stereoset", {"data_file": fixture, "scoring": "aul",
                                          "n_resamples": 20})  # fmt: skip
    result = bench.evaluate(scorer_of(tiny_bert))
    rows = result.rows
    stereo = kaneko_loop(tiny_bert, rows["stereotype"].tolist(), attention=False)
    anti = kaneko_loop(tiny_bert, rows["anti_stereotype"].tolist(), attention=False)
    np.testing.assert_allclose(rows["stereotype_score"], stereo, atol=1e-6, rtol=0)
    np.testing.assert_allclose(rows["anti_stereotype_score"], anti, atol=1e-6, rtol=0)
    overall = result.summary["overall"]
    assert overall["pct_stereotype_preferred"] == pytest.approx(100 * np.mean(stereo > anti))
    assert "(aul scoring)" in result.report
    # The default stays bias-bench's filler scoring, without Kaneko's extra percentage.
    default = build_benchmark("stereoset", {"data_file": fixture, "n_resamples": 20})
    assert (
        "pct_stereotype_preferred" not in default.evaluate(scorer_of(tiny_bert)).summary["overall"]
    )
