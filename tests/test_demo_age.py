"""The age demo: the planted corpus skew, CDA's known answer on the real mapper, the probe
that reads the association, and (slow) the demo end to end at toy size."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from tests_helpers import assert_planted_skew, planted_association_model

from cdsbias.data.occupations import occupational_sentences, person_words
from cdsbias.demo.age import (
    AGE_SHARE,
    ATTRIBUTES,
    age_sentences,
    count_pairs,
    demo_corpus,
    forms,
)
from cdsbias.demo.association_probe import probe, probe_sentences
from cdsbias.demo.base_model import DemoModelSettings
from cdsbias.demo.religion import attribute_shares, augmentation_weights, expected_gap
from cdsbias.resources import load_professions

REPO = Path(__file__).resolve().parents[1]


def test_age_corpus_plants_the_specified_skew():
    sentences = age_sentences(6000, seed=0)
    assert sentences == age_sentences(6000, seed=0)  # seeded
    assert_planted_skew(count_pairs(sentences), 6000, own_share=0.8)  # others at 0.2


def test_age_words_are_lower_case_adjectives_and_plural_nouns():
    words = forms()
    assert words == (("young", "old"), ("young", "old"), ("teenagers", "retirees"))
    text = " ".join(age_sentences(2000, seed=3))
    assert "my young neighbour" in text.lower() and "the old students" in text.lower()
    assert "The retirees in our street" in text and "Many teenagers enjoy" in text
    assert "An old " in text and "A old " not in text and " a old " not in text


def test_age_sentences_carry_no_gender_or_profession():
    words = set(" ".join(age_sentences(3000, seed=0)).lower().replace(".", " ").split())
    assert not words & person_words("en")
    assert not words & set(load_professions()["profession"])


def test_the_age_demo_corpus_keeps_the_gender_corpus_as_it_is():
    corpus = demo_corpus(1000, seed=1)
    assert corpus[:1000] == occupational_sentences(1000, 1)
    assert corpus[1000:] == age_sentences(int(1000 * AGE_SHARE), 1)


def test_known_answers_for_two_groups():
    shares = attribute_shares(2)
    assert shares == [[0.8, pytest.approx(0.2)], [pytest.approx(0.2), 0.8]]
    assert expected_gap(shares) == pytest.approx(math.log(4))  # ln(0.8/0.2) = 1.386
    # With two groups one counterfactual is drawn from one other group: the full swap.
    assert augmentation_weights("cda", "one", k=2) == (1.0, 1.0)
    assert expected_gap(shares, *augmentation_weights("cda", "one", k=2)) == pytest.approx(0)


def test_cda_on_the_age_axis_leaves_no_association_in_the_text():
    """The known answer on the real mapper: every age sentence is kept and swapped, so each
    game is named as often with young as with old words (and no game word changes)."""
    from cdsbias.cds.axis_corpus import AxisCounterfactualMapper

    sentences = age_sentences(2000, seed=5)
    mapper = AxisCounterfactualMapper("text", axis="age", mode="cda", seed=0)
    out = mapper({"text": sentences})["text"]
    assert len(out) == 2 * len(sentences)
    before, after = count_pairs(sentences), count_pairs(out)
    for a in range(2):
        assert after[0][a] == after[1][a] == before[0][a] + before[1][a]
    games = [t for t in " ".join(out).split() if t.strip(".") in ATTRIBUTES]
    assert len(games) == 2 * len(
        [t for t in " ".join(sentences).split() if t.strip(".") in ATTRIBUTES]
    )


def _planted_age_model(bonus: tuple[float, float]):
    """A tiny BERT whose logits are 0 everywhere, plus ``bonus[g]`` on group g's game when
    the input names group g (its adjective or plural noun)."""
    texts = [
        s.replace("[MASK]", ATTRIBUTES[0]) for g in range(2) for s in probe_sentences(g, "age")
    ]
    words = forms()
    group_words = [(words.adjectives[g], words.plurals[g]) for g in range(2)]
    return planted_association_model(texts, group_words, ATTRIBUTES, bonus)


def test_the_age_probe_reads_a_planted_association_exactly():
    from cdsbias.scoring import MaskedLMScorer

    bonus = (1.5, 0.5)
    model, tokenizer = _planted_age_model(bonus)
    result = probe(MaskedLMScorer(model, tokenizer, batch_size=8), "age")
    assert result.groups == ("young", "old") and result.attributes == ATTRIBUTES
    log_z = [math.log(len(tokenizer) - 1 + math.exp(b)) for b in bonus]
    # Group g's game: bonus[g] − ln Z_g after g, −ln Z_h after the other group h.
    for g in range(2):
        assert result.per_group[g] == pytest.approx(bonus[g] - log_z[g] + log_z[1 - g], abs=1e-5)
    assert result.gap == pytest.approx(sum(result.per_group) / 2)


def test_age_settings_have_their_own_cache():
    age = DemoModelSettings(axis="age")
    assert age.fingerprint() not in {DemoModelSettings().fingerprint(),
                                     DemoModelSettings(axis="religion").fingerprint()}  # fmt: skip
    assert age.record()["axis"] == "age"


def test_demo_model_refuses_age_in_german(tmp_path):
    from cdsbias.demo.base_model import build_demo_model
    from cdsbias.errors import CdsbiasError

    with pytest.raises(CdsbiasError, match="English only"):
        build_demo_model(tmp_path / "m", DemoModelSettings(axis="age", language="de"))
    assert not (tmp_path / "m").exists()


def test_demo_script_writes_the_age_corpus(tmp_path):
    out = tmp_path / "corpus.jsonl"
    script = [sys.executable, str(REPO / "scripts" / "demo_religion.py")]
    done = subprocess.run([*script, "corpus", "--axis", "age", "--out", str(out)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["text"] for r in rows] == demo_corpus(20000, 1)
    assert rows[0]["id"] == "age-demo-0" and f"{len(rows)} sentences" in done.stdout


@pytest.mark.slow
def test_age_demo_end_to_end(shared_data, tmp_path):
    """make demo-age's four steps at toy size: build, corpus, CDA run on age, report."""
    from tests_helpers import small_becpro

    from cdsbias.demo.base_model import REPORT_FILE, build_demo_model
    from cdsbias.train.run import main as train_main

    settings = DemoModelSettings(axis="age", steps=8, sentences=300)
    base = build_demo_model(tmp_path / "base", settings, progress=False)
    built = json.loads((base / REPORT_FILE).read_text())
    assert built["settings"]["axis"] == "age" and "age_probe" in built
    script = [sys.executable, str(REPO / "scripts" / "demo_religion.py")]
    corpus = tmp_path / "corpus.jsonl"
    subprocess.run([*script, "corpus", "--axis", "age", "--out", str(corpus)], check=True,
                   capture_output=True)  # fmt: skip
    run = tmp_path / "run"
    becpro = small_becpro(tmp_path)
    code = train_main([
        str(REPO / "recipes" / "demo_age.yaml"), f"output_dir={run}",
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
    assert "known answer, planted (original corpus): +1.386" in done.stdout
    assert "known answer, the fine-tuning text (cda, counterfactuals one): +0.000" in done.stdout
    result = json.loads(out.read_text())
    assert result["axis"] == "age" and result["steps"] == [0, 4]
    assert result["probe_before"]["gap"] == pytest.approx(built["age_probe"]["gap"])
