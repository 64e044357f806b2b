"""The religion demo: the planted corpus skew, its known answers, and the probe that reads it."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from tests_helpers import assert_planted_skew, planted_association_model

from cdsbias.data.occupations import occupational_sentences, person_words
from cdsbias.demo.association_probe import association_gap, probe, probe_sentences
from cdsbias.demo.base_model import DemoModelSettings
from cdsbias.demo.religion import (
    ATTRIBUTES,
    FRAMES,
    PROBE_TEMPLATES,
    RELIGION_SHARE,
    attribute_shares,
    augmentation_weights,
    count_pairs,
    demo_corpus,
    expected_gap,
    religion_forms,
    religion_sentences,
)
from cdsbias.resources import load_professions

REPO = Path(__file__).resolve().parents[1]


def test_religion_corpus_plants_the_specified_skew():
    sentences = religion_sentences(6000, seed=0)
    assert sentences == religion_sentences(6000, seed=0)  # seeded
    assert_planted_skew(count_pairs(sentences), 6000, own_share=0.8)  # others at 0.1


def test_religion_words_are_used_as_adjectives_and_plurals_with_capitals():
    forms = religion_forms()
    assert forms.groups == ("jewish", "christian", "muslim")
    assert forms.adjectives == ("jewish", "christian", "muslim")
    assert forms.plurals == ("jews", "christians", "muslims")
    text = " ".join(religion_sentences(2000, seed=3))
    for word in forms.adjectives + forms.plurals:
        assert word.capitalize() in text
        assert f" {word} " not in text  # never lower case mid-sentence
    assert "Muslim neighbour" in text or "Muslim friend" in text  # adjective use
    assert "The Muslims in our street" in text  # plural noun use
    assert "Muslim families" in text and "familys" not in text  # plural person nouns


def test_religion_sentences_carry_no_gender_or_profession():
    words = set(" ".join(religion_sentences(3000, seed=0)).lower().replace(".", " ").split())
    assert not words & person_words("en")
    professions = set(load_professions()["profession"])
    assert not words & professions


def test_the_religion_demo_corpus_keeps_the_gender_corpus_as_it_is():
    corpus = demo_corpus(1000, seed=1)
    assert corpus[:1000] == occupational_sentences(1000, 1)
    assert corpus[1000:] == religion_sentences(int(1000 * RELIGION_SHARE), 1)


def test_probe_templates_are_not_training_frames():
    assert not set(PROBE_TEMPLATES) & set(FRAMES)
    assert len(probe_sentences(0)) == 2 * 6 + 2  # two person templates x 6 nouns, 2 plural


def test_expected_gaps_hand_computed():
    shares = attribute_shares(3)
    assert shares[0] == pytest.approx([0.8, 0.1, 0.1])
    assert expected_gap(shares) == pytest.approx(math.log(8))  # ln(0.8/0.1)
    # One counterfactual (bias-bench): group g's text is its own (0.8, 0.1, 0.1) plus half of
    # each other group's: own game 0.8 + 0.5*(0.1+0.1) = 0.9 of 2.0, another's 0.55 of 2.0.
    one = augmentation_weights("cda", "one", k=3)
    assert one == (1.0, 0.5)
    assert expected_gap(shares, *one) == pytest.approx(math.log(0.45 / 0.275))
    assert expected_gap(shares, *augmentation_weights("cda", "all", k=3)) == pytest.approx(0.0)
    assert expected_gap(shares, *augmentation_weights("cds", "one", 0.5, 3)) == pytest.approx(
        math.log(0.45 / 0.275)
    )
    assert expected_gap(shares, *augmentation_weights("none")) == pytest.approx(math.log(8))
    with pytest.raises(ValueError):
        augmentation_weights("cds", "all", 0.5, 3)


def test_association_gap_hand_computed():
    scores = [[-1.0, -3.0, -4.0], [-2.0, -0.5, -3.0], [-5.0, -2.0, -1.0]]
    gap, per_group = association_gap(scores)
    # g0: -1 - mean(-2, -5) = 2.5; g1: -0.5 - mean(-3, -2) = 2.0; g2: -1 - mean(-4, -3) = 2.5
    assert per_group == pytest.approx([2.5, 2.0, 2.5])
    assert gap == pytest.approx(7 / 3)


def _planted_model(bonus: tuple[float, ...]):
    """A tiny BERT whose logits at every position are 0, plus ``bonus[g]`` on group g's game
    when the input names group g (its adjective or plural): ln P(a_g | g) = bonus[g] − ln Z
    and ln P(a_g | h) = −ln Z' , so group g's gap is exactly bonus[g] when Z = Z'."""
    texts = [s.replace("[MASK]", ATTRIBUTES[0]) for g in range(3) for s in probe_sentences(g)]
    forms = religion_forms()
    group_words = [(forms.adjectives[g], forms.plurals[g]) for g in range(3)]
    return planted_association_model(texts, group_words, ATTRIBUTES, bonus)


def test_probe_reads_a_planted_association_exactly():
    from cdsbias.scoring import MaskedLMScorer

    bonus = (1.0, 2.0, 3.5)
    model, tokenizer = _planted_model(bonus)
    result = probe(MaskedLMScorer(model, tokenizer, batch_size=8))
    vocab = len(tokenizer)
    for g in range(3):
        log_z = math.log(vocab - 1 + math.exp(bonus[g]))
        for a in range(3):
            expected = (bonus[g] if a == g else 0.0) - log_z
            assert result.scores[g][a] == pytest.approx(expected, abs=1e-5)
    # Group g's own game is bonus[g] more likely after g; after h, the game's logit is 0
    # but h's own game takes bonus[h] of the normaliser: gap_g = bonus[g] − ln Z_g + mean ln Z_h.
    log_z = [math.log(vocab - 1 + math.exp(b)) for b in bonus]
    for g in range(3):
        others = [log_z[h] for h in range(3) if h != g]
        expected = bonus[g] - log_z[g] + sum(others) / 2
        assert result.per_group[g] == pytest.approx(expected, abs=1e-5)
    assert result.gap == pytest.approx(sum(result.per_group) / 3)
    assert result.as_dict()["per_group_gap"]["muslim"] == result.per_group[2]


def test_religion_settings_have_their_own_cache_and_gender_keeps_its_fingerprint():
    gender = DemoModelSettings()
    # Fingerprints computed at commit 6446363, before the axis field: a cached gender model
    # (en, de, da) is reused as it was, and its report's settings are unchanged.
    assert gender.fingerprint() == "2fc9325d019044e4"
    assert DemoModelSettings(language="de").fingerprint() == "fb8ff64e6b55e969"
    assert DemoModelSettings(language="da", steps=2000).fingerprint() == "c9ec44a3674d427f"
    assert "axis" not in gender.record()
    religion = DemoModelSettings(axis="religion")
    assert religion.fingerprint() != gender.fingerprint()
    assert religion.record()["axis"] == "religion"


def test_demo_model_refuses_an_unknown_axis_and_religion_in_german(tmp_path):
    from cdsbias.demo.base_model import build_demo_model
    from cdsbias.errors import CdsbiasError

    with pytest.raises(CdsbiasError, match="axis 'race'"):
        build_demo_model(tmp_path / "m", DemoModelSettings(axis="race"))
    with pytest.raises(CdsbiasError, match="English only"):
        build_demo_model(tmp_path / "m", DemoModelSettings(axis="religion", language="de"))
    assert not (tmp_path / "m").exists()


def test_demo_religion_script_writes_the_fine_tuning_corpus(tmp_path):
    out = tmp_path / "corpus.jsonl"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo_religion.py"), "corpus", "--out", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert (
        len(rows) == int(20000 * (1 + RELIGION_SHARE)) and f"{len(rows)} sentences" in done.stdout
    )
    assert [r["text"] for r in rows] == demo_corpus(20000, 1)
    assert len({r["id"] for r in rows}) == len(rows)


def test_demo_religion_report_refuses_a_missing_model(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo_religion.py"), "report",
         "--base", str(tmp_path / "nothing"), "--run", str(tmp_path / "nothing")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "config.json" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_religion_demo_end_to_end(shared_data, tmp_path):
    """make demo-religion's four steps at toy size: build, corpus, n-ary CDA run, report."""
    from tests_helpers import small_becpro

    from cdsbias.demo.base_model import REPORT_FILE, build_demo_model
    from cdsbias.train.run import main as train_main

    settings = DemoModelSettings(axis="religion", steps=8, sentences=300)
    base = build_demo_model(tmp_path / "base", settings, progress=False)
    built = json.loads((base / REPORT_FILE).read_text())
    assert built["settings"]["axis"] == "religion" and "religion_probe" in built
    script = [sys.executable, str(REPO / "scripts" / "demo_religion.py")]
    corpus = tmp_path / "corpus.jsonl"
    subprocess.run([*script, "corpus", "--out", str(corpus)], check=True, capture_output=True)
    run = tmp_path / "run"
    becpro = small_becpro(tmp_path)
    code = train_main([
        str(REPO / "recipes" / "demo_religion.yaml"), f"output_dir={run}",
        f"model_name_or_path={base}", f"data_files={corpus}", f"bias_data_dir={shared_data}",
        "max_steps=4", "save_steps=4", "bias_n_resamples=50",
        f"bias_benchmarks={{becpro: {{data_file: {becpro}}}, crows_pairs: {{}}}}",
    ])  # fmt: skip
    assert code == 0
    out = tmp_path / "report.json"
    done = subprocess.run(
        [*script, "report", "--base", str(base), "--run", str(run), "--json", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "known answer, planted (original corpus): +2.079" in done.stdout
    assert "known answer, the fine-tuning text (cda, counterfactuals one): +0.492" in done.stdout
    result = json.loads(out.read_text())
    assert result["axis"] == "religion" and result["steps"] == [0, 4]
    # Gender and religion beside each other: BEC-Pro, and one CrowS-Pairs slice per axis.
    assert {"becpro", "crows_pairs[religion]", "crows_pairs[gender]"} <= set(result["benchmarks"])
    assert result["probe_before"]["gap"] == pytest.approx(built["religion_probe"]["gap"])
    assert len(result["heldout_loss"]) == 2
