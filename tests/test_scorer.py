"""The scorer against direct computations from model logits, on four architectures."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

SENTENCES = [
    "[MASK] is a nurse.",
    "This [MASK] is a [MASK] [MASK].",
    "My [MASK] works as a roofer.",
    "[MASK] applied for the position of [MASK].",
    "My [MASK], the judge, had a good day at work.",
]
TARGETS = ["He", "man", "brother", "She", "sister"]


def direct_log_prob(model, tokenizer, sentence: str, target: str) -> float:
    """ln P(target at the first slot), computed by hand: fill, tokenize, mask, forward."""
    mask = tokenizer.mask_token
    first, rest = sentence.split("[MASK]", 1)
    filled = first + target + rest.replace("[MASK]", mask)
    enc = tokenizer(filled, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    start, end = len(first), len(first) + len(target)
    positions = [
        i for i, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s < end and e > start
    ]
    # A word-boundary marker the tokenizer split off the word (a lone Ġ or ▁) is part of it.
    pieces = tokenizer.convert_ids_to_tokens(ids)
    before = positions[0] - 1
    if pieces[before] in ("Ġ", "▁") and not pieces[positions[0]].startswith(("Ġ", "▁")):
        positions.insert(0, before)
    truth = [ids[p] for p in positions]
    for p in positions:
        ids[p] = tokenizer.mask_token_id
    total = 0.0
    with torch.no_grad():
        for p, t in zip(positions, truth):
            logits = model(input_ids=torch.tensor([ids])).logits[0, p]
            total += float(torch.log_softmax(logits, dim=-1)[t])
            ids[p] = t
    return total


@pytest.mark.parametrize("arch", ["bert", "distilbert", "roberta", "albert"])
def test_target_log_probs_equal_direct_logits(model_zoo, arch):
    folder = model_zoo[arch]
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    scorer = MaskedLMScorer(model, tokenizer, batch_size=2)
    got = scorer.target_log_probs(SENTENCES, TARGETS)
    expected = [direct_log_prob(model, tokenizer, s, t) for s, t in zip(SENTENCES, TARGETS)]
    np.testing.assert_allclose(got, expected, atol=2e-5, rtol=0)
    assert np.all(got < 0)


def test_roberta_uses_its_own_mask_and_space_prefixed_pieces(model_zoo):
    scorer = MaskedLMScorer.from_pretrained(str(model_zoo["roberta"]))
    tokens = scorer.tokenizer.convert_ids_to_tokens
    mid = scorer.encode_target("This [MASK] is a nurse.", "man")
    assert tokens(list(mid.target_ids))[0].startswith("Ġ")
    start = scorer.encode_target("[MASK] is a nurse.", "He")
    assert not tokens(list(start.target_ids))[0].startswith("Ġ")
    # <mask> written in the model's own notation gives the same input as [MASK].
    same = scorer.encode_target("This <mask> is a nurse.", "man")
    assert same == mid
    np.testing.assert_allclose(
        scorer.target_log_probs(["This <mask> is a nurse."], ["man"]),
        scorer.target_log_probs(["This [MASK] is a nurse."], ["man"]),
    )


def test_multi_piece_target_is_chain_rule_not_nan(model_zoo):
    """ "roofers" splits into roofer + ##s: two passes, left to right."""
    folder = model_zoo["bert"]
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    scorer = MaskedLMScorer(model, tokenizer)
    encoded = scorer.encode_target("They are [MASK].", "roofers")
    assert tokenizer.convert_ids_to_tokens(list(encoded.target_ids)) == ["roofer", "##s"]
    ids = list(encoded.input_ids)
    p1, p2 = encoded.positions
    with torch.no_grad():
        first = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, p1], -1)
        ids[p1] = encoded.target_ids[0]
        second = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, p2], -1)
    expected = float(first[encoded.target_ids[0]] + second[encoded.target_ids[1]])
    got = scorer.target_log_probs(["They are [MASK]."], ["roofers"])[0]
    assert np.isfinite(got)
    assert got == pytest.approx(expected, abs=1e-5)


def test_slots_select_which_mask_is_the_target(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    sentence = "[MASK] works as a [MASK]."
    person = scorer.encode_target(sentence, "He", slot=0)
    job = scorer.encode_target(sentence, "nurse", slot=1)
    assert person.positions[0] < job.positions[0]
    # The other slot stays masked in both.
    assert person.input_ids.count(scorer.mask_id) == 2 == job.input_ids.count(scorer.mask_id)


def test_identical_inputs_run_once(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert), batch_size=4)
    sentences = ["[MASK] is a nurse."] * 50 + ["[MASK] is a judge."] * 50
    targets = ["He", "She"] * 50
    scores = scorer.target_log_probs(sentences, targets)
    assert scorer.sequences_run == 2
    assert len(set(np.round(scores, 10))) == 4


def test_batching_and_order_do_not_change_scores(tiny_bert):
    sentences = SENTENCES * 3
    targets = TARGETS * 3
    one = MaskedLMScorer.from_pretrained(str(tiny_bert), batch_size=1)
    many = MaskedLMScorer.from_pretrained(str(tiny_bert), batch_size=64)
    reference = one.target_log_probs(sentences, targets)
    np.testing.assert_allclose(many.target_log_probs(sentences, targets), reference, atol=1e-5)
    reverse = many.target_log_probs(sentences[::-1], targets[::-1])[::-1]
    np.testing.assert_allclose(reverse, reference, atol=1e-5)


def test_pipeline_parity(real_vocab_bert):
    """The fill-mask pipeline's score for a target equals exp(target_log_probs)."""
    model = AutoModelForMaskedLM.from_pretrained(real_vocab_bert).eval()
    tokenizer = AutoTokenizer.from_pretrained(real_vocab_bert)
    fill = pipeline("fill-mask", model=model, tokenizer=tokenizer, device="cpu")
    scorer = MaskedLMScorer(model, tokenizer)
    rows = [
        ("[MASK] is a nurse.", "she"),
        ("This [MASK] is a lodging manager.", "man"),
        ("My [MASK] wants to become a roofer.", "father"),
        ("My [MASK], the judge, had a good day at work.", "aunt"),
    ]
    for sentence, target in rows:
        expected = fill(sentence, targets=[target])[0]["score"]
        got = float(np.exp(scorer.target_log_probs([sentence], [target])[0]))
        assert got == pytest.approx(expected, rel=1e-5)


def test_pseudo_log_likelihood_masks_one_token_at_a_time(tiny_bert):
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    scorer = MaskedLMScorer(model, tokenizer)
    ids = tokenizer("He is a nurse.")["input_ids"]
    (per_token,) = scorer.masked_token_log_probs([ids])
    expected = []
    for p in range(1, len(ids) - 1):  # [CLS] and [SEP] are not scored
        masked = list(ids)
        masked[p] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([masked])).logits[0, p]
        expected.append(float(torch.log_softmax(logits, -1)[ids[p]]))
    np.testing.assert_allclose(per_token, expected, atol=1e-5)


def test_vocab_log_probs_is_a_distribution(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    encoded = scorer.encode_target("[MASK] is a nurse.", "he")
    dist = scorer.vocab_log_probs([encoded.input_ids], [encoded.positions[0]])
    assert dist.shape == (1, len(scorer.tokenizer))
    assert float(dist.exp().sum()) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize(
    ("sentence", "target", "message"),
    [
        ("He is a nurse.", "He", r"has no \[MASK\] slot"),
        ("[MASK] is a nurse.", "zebra", "unknown token"),
        ("[MASK] is a nurse.", "  ", "Empty target"),
    ],
)
def test_bad_queries_give_clear_errors(tiny_bert, sentence, target, message):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    with pytest.raises(CdsbiasError, match=message):
        scorer.target_log_probs([sentence], [target])


def test_slot_out_of_range(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    with pytest.raises(CdsbiasError, match="Slot 3 does not exist"):
        scorer.encode_target("[MASK] is a [MASK].", "he", slot=3)


def test_too_long_input_is_refused(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    with pytest.raises(CdsbiasError, match="the model accepts 128"):
        scorer.encode_target("[MASK] " + "nurse " * 200, "he")


# ---------------------------------------------------------------- loading without bars
def test_quiet_loading_prints_no_progress_bar(tiny_bert, capfd):
    from transformers.utils import logging as hf_logging

    from cdsbias.scoring import load_masked_lm

    load_masked_lm(tiny_bert, progress=False)
    MaskedLMScorer.from_pretrained(str(tiny_bert), progress=False)
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled()  # restored for everyone else
    load_masked_lm(tiny_bert)
    assert "Loading weights" in capfd.readouterr().err


def test_long_input_error_is_one_short_line(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    with pytest.raises(CdsbiasError) as error:
        scorer.encode_target("[MASK] " + "nurse " * 200, "he")
    message = str(error.value)
    assert "\n" not in message and len(message) < 200
    assert "203 tokens long" in message


# ------------------------------------------------------------ compat on other vocabularies
BECPRO_ROWS = (
    ["He is a nurse.", "She is a nurse."],
    ["[MASK] is a nurse.", "[MASK] is a nurse."],
    ["[MASK] is a [MASK].", "[MASK] is a [MASK]."],
)


def test_compat_warns_once_when_id_zero_is_not_padding(model_zoo):
    from cdsbias.benchmarks.becpro_bartl2020 import bartl2020_associations

    roberta = MaskedLMScorer.from_pretrained(str(model_zoo["roberta"]))
    with pytest.warns(UserWarning, match=r"BERT vocabularies.*'<s>'.*Drop --compat") as caught:
        bartl2020_associations(roberta, *BECPRO_ROWS)
    assert len([w for w in caught if "bartl2020" in str(w.message)]) == 1


def test_compat_is_silent_on_bert_vocabularies(tiny_bert):
    import warnings

    from cdsbias.benchmarks.becpro_bartl2020 import bartl2020_associations

    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, _, association = bartl2020_associations(scorer, *BECPRO_ROWS)
    assert np.all(np.isfinite(association))


# ------------------------------------------------- lower-case targets in cased models
@pytest.fixture(scope="module")
def cased(tmp_path_factory) -> MaskedLMScorer:
    from tiny_models import tiny_masked_lm

    folder = tiny_masked_lm("bert-cased", tmp_path_factory.mktemp("cased") / "bert", layers=1)
    return MaskedLMScorer.from_pretrained(str(folder))


def test_lowercase_sentence_start_warns_once_per_call(cased):
    from cdsbias.scoring import LowercaseSentenceStartWarning

    sentences = ["[MASK] is a nurse.", "[MASK] is a judge.", "Yes. [MASK] is here."] * 20
    with pytest.warns(LowercaseSentenceStartWarning) as caught:
        cased.target_log_probs(sentences, ["he", "she", "he"] * 20)
    assert len(caught) == 1
    assert "3 lower-case targets" in str(caught[0].message)
    assert "capitalise them (e.g. 'He')" in str(caught[0].message)


@pytest.mark.parametrize(
    ("sentence", "target", "slot", "warns"),
    [
        ("[MASK] is a nurse.", "he", 0, True),
        ('"[MASK] is a nurse," she said.', "he", 0, True),
        ("Who is it? [MASK] is a nurse.", "he", 0, True),
        ('It ended. "[MASK] left."', "she", 0, True),
        ("[MASK] is a nurse.", "He", 0, False),
        ("Yes, [MASK] is a nurse.", "he", 0, False),
        ("[MASK] works as a [MASK].", "nurse", 1, False),
        ("[MASK]. [MASK] is a nurse.", "he", 1, True),
    ],
)
def test_sentence_initial_slots(cased, sentence, target, slot, warns):
    assert bool(cased.lowercase_sentence_starts([(sentence, target, slot)])) is warns


def test_uncased_models_never_warn_about_case(tiny_bert):
    import warnings

    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    assert not scorer.cased
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scorer.target_log_probs(["[MASK] is a nurse."], ["he"])


def test_batches_are_capped_by_padded_tokens():
    from cdsbias.scoring.batching import capped_batches, max_batch_tokens

    # Lengths sorted ascending: 3 items of width 3 are 9 tokens; a 4th of width 5 would be 20.
    batches = capped_batches([0, 1, 2, 3], [1] * 4, 10, 1, [2, 3, 3, 5], max_tokens=9)
    assert list(batches) == [[0, 1, 2], [3]]
    # A single item longer than the cap still runs, alone.
    assert list(capped_batches([0, 1], [1, 1], 10, 1, [12, 12], max_tokens=9)) == [[0], [1]]

    class Config:
        intermediate_size = 3072  # BERT-base

    assert max_batch_tokens(type("Model", (), {"config": Config})()) == (1 << 20) // 3072 == 341
