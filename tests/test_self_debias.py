"""Self-Debias as a scoring mode: hand numbers, identity cases, batched == one-at-a-time."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_models import ARCHITECTURES

from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.readouts import log_probs_and_top_k, sequence_log_probs
from cdsbias.scoring.self_debias import (
    GENDER_PREFIX,
    SelfDebias,
    debias_log_probs,
    debiased_mlm_loss,
)

SENTENCES = [
    "the [MASK] is a nurse.",
    "my [MASK] works as a mason at work.",
    "this [MASK] had a good day.",
    "my [MASK] wants to become a judge.",
]
TARGETS = ["man", "woman", "man", "roofer"]  # "roofer" is 3-5 pieces in most tiny vocabularies


def test_hand_numbers():
    """p = [.5, .3, .2], q = [.2, .6, .2]: only token 1 gains under the prefix; its factor
    is max(exp(-50 * .3), .01) = .01, so p' ∝ [.5, .003, .2] / .703."""
    log_p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64).log()
    log_q = torch.tensor([0.2, 0.6, 0.2], dtype=torch.float64).log()
    p_prime = debias_log_probs(log_p, log_q, 50.0, 0.01).exp().numpy()
    np.testing.assert_allclose(p_prime, [0.711238, 0.004267, 0.284495], atol=1e-6)
    # A small excess decays by exp(-λ·excess), above the floor: q − p = .01 -> e^-0.5.
    log_q = torch.tensor([0.49, 0.31, 0.2], dtype=torch.float64).log()
    factor = math.exp(-50 * 0.01)
    expected = np.array([0.5, 0.3 * factor, 0.2]) / (0.7 + 0.3 * factor)
    np.testing.assert_allclose(debias_log_probs(log_p, log_q, 50.0, 0.01).exp(), expected)
    # It works in a buffer of its own: the inputs are left as they were.
    assert torch.equal(log_q, torch.tensor([0.49, 0.31, 0.2], dtype=torch.float64).log())
    assert torch.equal(log_p, torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64).log())


def test_settings_are_validated():
    with pytest.raises(CdsbiasError, match="epsilon"):
        SelfDebias(epsilon=0)
    with pytest.raises(CdsbiasError, match="lambda"):
        SelfDebias(decay_constant=-1)
    assert SelfDebias("").is_identity and SelfDebias(decay_constant=0).is_identity
    assert not SelfDebias().is_identity


def _reference_log_prob(model, tokenizer, settings, ids, positions, target_ids) -> float:
    """One input at a time, in probability space as bias-bench: ln p'(target), summed over
    the pieces (chain rule: pieces to the left shown)."""
    cls = tokenizer.convert_ids_to_tokens([ids[0]])[0]
    prefix = tokenizer(f"{cls} {settings.prefix}", add_special_tokens=False)["input_ids"][1:]
    ids = list(ids)
    total = 0.0
    for position, target in zip(positions, target_ids, strict=True):
        plain = torch.tensor([ids])
        prefixed = torch.tensor([ids[:1] + prefix + ids[1:]])
        with torch.no_grad():
            p = model(plain).logits[0, position].double().softmax(-1)
            q = model(prefixed).logits[0, position + len(prefix)].double().softmax(-1)
        factor = torch.exp(-settings.decay_constant * (q - p).clamp_min(0))
        p_prime = p * factor.clamp_min(settings.epsilon)
        total += math.log(float(p_prime[target] / p_prime.sum()))
        ids[position] = target
    return total


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_batched_equals_one_sentence_loop(zoo, arch):
    plain = MaskedLMScorer.from_pretrained(str(zoo[arch]), batch_size=3)
    settings = SelfDebias()
    scorer = MaskedLMScorer(plain.model, plain.tokenizer, batch_size=3, self_debias=settings)
    got = scorer.target_log_probs(SENTENCES, TARGETS)
    encoded = [scorer.encode_target(s, t) for s, t in zip(SENTENCES, TARGETS, strict=True)]
    expected = [
        _reference_log_prob(
            scorer.model, scorer.tokenizer, settings, e.input_ids, e.positions, e.target_ids
        )
        for e in encoded
    ]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # Self-Debias is on: the scores moved (little on near-uniform tiny models).
    assert np.max(np.abs(got - plain.target_log_probs(SENTENCES, TARGETS))) > 1e-6


def test_every_read_is_debiased(tiny_bert):
    """Top-k and pseudo-log-likelihood reads go through the same decay as target reads."""
    plain = MaskedLMScorer.from_pretrained(str(tiny_bert))
    scorer = MaskedLMScorer(plain.model, plain.tokenizer, self_debias=SelfDebias())
    ids = scorer.encode(SENTENCES[0])
    position = ids.index(scorer.mask_id)
    full = scorer.vocab_log_probs([ids], [position])[0]
    target, top_ids, _ = log_probs_and_top_k(scorer, [ids], [position], [7], 2)
    assert target[0] == pytest.approx(float(full[7]), abs=1e-6)
    assert list(top_ids[0]) == torch.topk(full, 2).indices.tolist()
    assert float(full.exp().sum()) == pytest.approx(1.0, abs=1e-4)
    sequence = scorer.encode("he is a nurse.")
    pll = scorer.masked_token_log_probs([sequence])[0]
    for index, p in enumerate(i for i, t in enumerate(sequence) if t not in scorer._frame_ids):
        masked = list(sequence)
        masked[p] = scorer.mask_id
        single = scorer.token_log_probs([masked], [p], [sequence[p]])[0]
        assert pll[index] == pytest.approx(single, abs=1e-6)


@pytest.mark.parametrize("settings", [SelfDebias(""), SelfDebias(decay_constant=0.0)])
def test_identity_settings_give_exactly_the_plain_scores(model_zoo, settings):
    plain = MaskedLMScorer.from_pretrained(str(model_zoo["roberta"]))
    scorer = MaskedLMScorer(plain.model, plain.tokenizer, self_debias=settings)
    np.testing.assert_array_equal(
        scorer.target_log_probs(SENTENCES, TARGETS), plain.target_log_probs(SENTENCES, TARGETS)
    )
    sequences = [plain.encode(s) for s in ("he is a nurse.", "she had a good day.")]
    for a, b in zip(
        scorer.masked_token_log_probs(sequences), plain.masked_token_log_probs(sequences)
    ):
        np.testing.assert_array_equal(a, b)


def test_prefix_insertion_and_cost(model_zoo):
    """WordPiece: the prefix alone; byte-level BPE: ``ĠThe`` first and a lone ``Ġ`` last,
    as bias-bench's ``"<s> " + prefix`` tokenization gives."""
    bert = MaskedLMScorer.from_pretrained(str(model_zoo["bert"]))
    settings = SelfDebias()
    ids = settings.prefix_ids(bert.tokenizer, bert.tokenizer.cls_token_id)
    assert list(ids) == bert.tokenizer(GENDER_PREFIX, add_special_tokens=False)["input_ids"]
    cost = settings.inference_cost(bert.tokenizer, bert.tokenizer.cls_token_id)
    assert cost == {"forward_passes": 2, "extra_tokens": len(ids)}
    roberta = MaskedLMScorer.from_pretrained(str(model_zoo["roberta"]))
    pieces = roberta.tokenizer.convert_ids_to_tokens(
        list(settings.prefix_ids(roberta.tokenizer, roberta.tokenizer.bos_token_id))
    )
    assert pieces[0].startswith("Ġ") and pieces[-1] == "Ġ"
    assert SelfDebias("").inference_cost(bert.tokenizer, 0) == {
        "forward_passes": 1,
        "extra_tokens": 0,
    }
    scorer = MaskedLMScorer(bert.model, bert.tokenizer, self_debias=settings)
    scorer.target_log_probs(SENTENCES, TARGETS)
    assert scorer.sequences_run == 2 * len(SENTENCES)


def test_unmasked_reads_are_refused(tiny_bert):
    plain = MaskedLMScorer.from_pretrained(str(tiny_bert))
    scorer = MaskedLMScorer(plain.model, plain.tokenizer, self_debias=SelfDebias())
    ids = scorer.encode("he is a nurse.")
    with pytest.raises(CdsbiasError, match="masked positions only"):
        sequence_log_probs(scorer, [ids], [ids])
    assert scorer.sequences_run == 0


def test_debiased_mlm_loss(tiny_bert):
    """Off: the transformers MLM loss of the same masks. On: mean −ln p' of the reference."""
    plain = MaskedLMScorer.from_pretrained(str(tiny_bert))
    tokenizer = plain.tokenizer
    inputs, labels = [], []
    for text, masked_at in (("he is a nurse.", (1, 3)), ("she had a good day at work.", (2,))):
        ids = plain.encode(text)
        row = [-100] * len(ids)
        for p in masked_at:
            row[p] = ids[p]
            ids[p] = tokenizer.mask_token_id
        inputs.append(ids)
        labels.append(row)
    expected_plain = []
    for ids, row in zip(inputs, labels, strict=True):
        with torch.no_grad():
            logits = plain.model(torch.tensor([ids])).logits[0].double()
        for p, label in enumerate(row):
            if label != -100:
                expected_plain.append(-float(logits[p].log_softmax(-1)[label]))
    assert debiased_mlm_loss(plain, inputs, labels) == pytest.approx(
        np.mean(expected_plain), abs=1e-5
    )
    settings = SelfDebias()
    scorer = MaskedLMScorer(plain.model, tokenizer, self_debias=settings)
    expected = [
        -_reference_log_prob(plain.model, tokenizer, settings, ids, [p], [label])
        for ids, row in zip(inputs, labels, strict=True)
        for p, label in enumerate(row)
        if label != -100
    ]
    assert debiased_mlm_loss(scorer, inputs, labels) == pytest.approx(np.mean(expected), abs=1e-5)
    assert math.isnan(debiased_mlm_loss(scorer, [inputs[0]], [[-100] * len(inputs[0])]))


def test_cli_records_self_debias_in_rows_and_summary(tiny_bert, becpro, tmp_path):
    out = tmp_path / "out"
    code = main([
        "evaluate", str(tiny_bert), "-b", "becpro", "--data", str(becpro), "--out", str(out),
        "--option", "n_resamples=50", "--self-debias", "--quiet",
    ])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "becpro" / "summary.json").read_text())
    assert summary["self_debias"] == {
        "prefix": GENDER_PREFIX,
        "decay_constant": 50.0,
        "epsilon": 0.01,
    }
    rows = pd.read_csv(out / "becpro" / "rows.tsv", sep="\t")
    assert set(rows["self_debias"]) == {SelfDebias().label()}


def test_cli_refuses_a_benchmark_without_masked_reads(tiny_bert, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", "abc", "--out", str(out), "--self-debias"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("error: --self-debias") and "abc.scoring=pll" in err[0]
    assert not out.exists()


def test_cli_constants_need_the_mode(tiny_bert, tmp_path, capsys):
    code = main([
        "evaluate", str(tiny_bert), "-b", "becpro", "--out", str(tmp_path / "out"),
        "--self-debias-lambda", "10",
    ])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["error: --self-debias-lambda applies only with --self-debias."]


def test_becpro_compat_is_refused_under_self_debias(tiny_bert, becpro, tmp_path, capsys):
    """compat=bartl2020 runs its own forward passes: no debiased result may be labelled."""
    out = tmp_path / "out"
    code = main([
        "evaluate", str(tiny_bert), "-b", "becpro", "--data", str(becpro), "--out", str(out),
        "--option", "compat=bartl2020", "--self-debias",
    ])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "drop the compat option" in err[0]
    assert not out.exists()
    from cdsbias.benchmarks import build_benchmark

    plain = MaskedLMScorer.from_pretrained(str(tiny_bert))
    scorer = MaskedLMScorer(plain.model, plain.tokenizer, self_debias=SelfDebias())
    benchmark = build_benchmark("becpro", {"data_file": becpro, "compat": "bartl2020"})
    with pytest.raises(CdsbiasError, match="Self-Debias cannot score becpro"):
        benchmark.evaluate(scorer)
