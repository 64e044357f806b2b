"""Fill-in-the-blank probes and the ``cdsbias fill`` command, against direct forward passes."""

from __future__ import annotations

import argparse
import json
import math
import re

import pytest
import torch

from cdsbias.benchmarks.kurita_probe import log_probability_bias
from cdsbias.commands import fill as fill_command
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.probes import fill
from cdsbias.scoring.readouts import decode_token


def _load(folder):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    return AutoModelForMaskedLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(
        folder
    )


def _mask_log_probs(model, tokenizer, text: str):
    encoding = tokenizer(text.replace("[MASK]", tokenizer.mask_token), return_tensors="pt")
    with torch.no_grad():
        logits = model(**encoding).logits[0].double()
    positions = (encoding["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist()
    return torch.log_softmax(logits, dim=-1), positions


@pytest.fixture(scope="module")
def tiny(tiny_bert):
    model, tokenizer = _load(tiny_bert)
    return MaskedLMScorer.from_pretrained(str(tiny_bert)), model, tokenizer


def test_fill_target_probabilities_difference_ratio_and_top_k(tiny):
    scorer, model, tok = tiny
    result = fill(scorer, "[MASK] is a nurse.", ["he", "she"], top_k=5)
    lp, pos = _mask_log_probs(model, tok, "[MASK] is a nurse.")
    he, she = (float(lp[pos[0], tok.convert_tokens_to_ids(w)]) for w in ("he", "she"))
    assert [t.word for t in result.targets] == ["he", "she"]
    assert result.targets[0].log_prob == pytest.approx(he, abs=1e-4)
    assert result.targets[1].prob == pytest.approx(math.exp(she), rel=1e-4)
    assert result.difference == pytest.approx(math.exp(he) - math.exp(she), abs=1e-6)
    assert result.ratio == pytest.approx(math.exp(he - she), rel=1e-4)
    assert result.log_ratio == pytest.approx(he - she, abs=1e-4)
    values, ids = torch.topk(lp[pos[0]], 5)
    assert [p.token_id for p in result.top_k] == ids.tolist()
    assert [p.token for p in result.top_k] == [tok.decode([i]).strip() for i in ids.tolist()]
    assert [p.log_prob for p in result.top_k] == pytest.approx(values.tolist(), abs=1e-4)


def test_fill_multi_piece_target_uses_the_chain_rule(tiny):
    scorer, model, tok = tiny
    result = fill(scorer, "this [MASK] is good.", ["nurses"], top_k=0)
    first_lp, first_pos = _mask_log_probs(model, tok, "this [MASK] [MASK] is good.")
    second_lp, second_pos = _mask_log_probs(model, tok, "this nurse [MASK] is good.")
    expected = float(
        first_lp[first_pos[0], tok.convert_tokens_to_ids("nurse")]
        + second_lp[second_pos[0], tok.convert_tokens_to_ids("##s")]
    )
    assert result.targets[0].pieces == ("nurse", "##s")
    assert result.targets[0].log_prob == pytest.approx(expected, abs=1e-4)
    assert result.top_k == []
    assert result.ratio is None


def test_log_probability_bias_two_sentences(tiny):
    scorer, model, tok = tiny
    probe = log_probability_bias(scorer, "[MASK] is a nurse.", ("he", "she"), "nurse")
    shown, shown_pos = _mask_log_probs(model, tok, "[MASK] is a nurse.")
    masked, masked_pos = _mask_log_probs(model, tok, "[MASK] is a [MASK].")
    he, she = tok.convert_tokens_to_ids(["he", "she"])
    expected = float(
        (shown[shown_pos[0], he] - masked[masked_pos[0], he])
        - (shown[shown_pos[0], she] - masked[masked_pos[0], she])
    )
    assert probe.template == "GGG is a XXX."
    assert probe.score == pytest.approx(expected, abs=1e-4)
    assert probe.log_ratio_shown - probe.log_ratio_masked == pytest.approx(probe.score)


def test_probe_errors(tiny):
    scorer = tiny[0]
    with pytest.raises(CdsbiasError, match="exactly one"):
        fill(scorer, "he is a nurse.", ["he"])
    with pytest.raises(CdsbiasError, match="exactly one"):
        fill(scorer, "[MASK] is a [MASK].", ["he"])
    with pytest.raises(CdsbiasError, match="not a word"):
        log_probability_bias(scorer, "[MASK] is a nurse.", ("he", "she"), "nur")
    with pytest.raises(CdsbiasError, match="unknown token"):
        fill(scorer, "[MASK] is a nurse.", ["zebra"])


def test_top_k_decodes_whole_tokens(model_zoo, real_vocab_bert):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(real_vocab_bert)
    assert decode_token(tok, tok.convert_tokens_to_ids("philippines")) == "philippines"
    roberta = MaskedLMScorer.from_pretrained(str(model_zoo["roberta"]))
    result = fill(roberta, "My brother works as a <mask>.", top_k=10)
    assert len(result.top_k) == 10
    for prediction in result.top_k:
        decoded = roberta.tokenizer.decode([prediction.token_id]).strip()
        if decoded and decoded.isprintable() and "\ufffd" not in decoded:
            assert prediction.token == decoded
            assert "Ġ" not in prediction.token
        else:  # part of a UTF-8 character, a control byte: its bytes, never U+FFFD
            assert re.fullmatch(r"(<0x[0-9A-F]{2}>)+", prediction.token), prediction.token
    # Byte-level pieces of whole words decode to the word, not to spaced-out characters.
    words = [t for t in roberta.tokenizer.get_vocab() if t.startswith("Ġ") and len(t) > 4]
    assert words
    for piece in words:
        if piece[1:].isalpha():
            token_id = roberta.tokenizer.convert_tokens_to_ids(piece)
            assert decode_token(roberta.tokenizer, token_id) == piece[1:]


def _run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cdsbias")
    fill_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_fill_command_table_and_json(tiny_bert, tiny, capsys):
    code = _run_cli(
        [
            "fill",
            str(tiny_bert),
            "[MASK] is a nurse.",
            "--targets",
            "he,she",
            "--top-k",
            "3",
            "--attribute",
            "nurse",
            "--device",
            "cpu",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "P(he) / P(she)" in out
    assert "bias of 'nurse' towards he vs she" in out
    code = _run_cli(["fill", str(tiny_bert), "[MASK] is a nurse.", "--targets", "he,she", "--json"])
    payload = json.loads(capsys.readouterr().out)
    expected = fill(tiny[0], "[MASK] is a nurse.", ["he", "she"], top_k=10)
    assert payload["log_ratio"] == pytest.approx(expected.log_ratio)
    assert [p["token"] for p in payload["top_k"]] == [p.token for p in expected.top_k]
    with pytest.raises(CdsbiasError, match="exactly two"):
        _run_cli(["fill", str(tiny_bert), "[MASK] is a nurse.", "--attribute", "nurse"])


def test_fill_runs_the_model_once_for_single_piece_targets(tiny):
    scorer = tiny[0]
    before = scorer.sequences_run
    fill(scorer, "[MASK] is a good nurse.", ["he", "she", "him"], top_k=3)
    assert scorer.sequences_run - before == 1


def test_mask_errors_name_the_models_own_mask_only_when_it_differs(tiny, model_zoo):
    with pytest.raises(CdsbiasError, match=r"needs exactly one \[MASK\]; found 0") as error:
        fill(tiny[0], "he is a nurse.", ["he"])
    assert "(or" not in str(error.value)
    roberta = MaskedLMScorer.from_pretrained(str(model_zoo["roberta"]))
    with pytest.raises(CdsbiasError, match=r"one \[MASK\] \(or this model's own <mask>\); found 2"):
        fill(roberta, "[MASK] is a <mask>.", ["he"])


def test_target_pieces_are_decoded_like_the_top_k(model_zoo):
    roberta = MaskedLMScorer.from_pretrained(str(model_zoo["roberta"]))
    result = fill(roberta, "This [MASK] is a nurse.", ["man"], top_k=0)
    (target,) = result.targets
    assert roberta.tokenizer.convert_ids_to_tokens(list(target.piece_ids)) == ["Ġman"]
    assert target.pieces == ("man",)
    assert result.as_dict()["targets"][0]["piece_ids"] == list(target.piece_ids)


def test_fill_warns_once_for_lowercase_targets_at_a_sentence_start(tmp_path):
    from tiny_models import tiny_masked_lm

    from cdsbias.scoring import LowercaseSentenceStartWarning

    folder = tiny_masked_lm("bert-cased", tmp_path / "cased", layers=1)
    scorer = MaskedLMScorer.from_pretrained(str(folder))
    with pytest.warns(LowercaseSentenceStartWarning, match=r"'he', 'she' fill slot 0") as caught:
        fill(scorer, "[MASK] is a nurse.", ["he", "she"], top_k=0)
    assert len(caught) == 1


def test_cli_warnings_start_on_a_fresh_line_while_a_bar_is_drawn(capsys):
    import sys
    import warnings

    from tqdm import tqdm

    from cdsbias.cli import install_warning_printer

    previous = install_warning_printer()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            bar = tqdm(total=4, desc="scoring", file=sys.stderr, leave=False)
            bar.update(2)
            warnings.warn("the model is cased", UserWarning, stacklevel=1)
            bar.close()
    finally:
        warnings.showwarning = previous
    err = capsys.readouterr().err
    before, found, _ = err.partition("warning: the model is cased\n")
    assert found
    # Nothing of the bar is left on the warning's line.
    assert re.split(r"[\r\n]", before)[-1].strip() == ""
    assert "scoring" in before  # the bar was drawn (and cleared) before the warning
