"""pronoun_fidelity: rows, scores against a hand-written loop over a tiny model's logits, a
planted model that always fills *they*, the statistics by hand, and bad template files."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
import torch
from conftest import ASSETS, build_bert

from cdsbias.benchmarks import build_benchmark, load_all
from cdsbias.benchmarks.pronoun_fidelity_data import TEMPLATES, declaration, read_templates
from cdsbias.cds.pronoun_families import CASES, FAMILIES
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

load_all()
DATA = ASSETS / "pronoun_fidelity"


def _benchmark(**options):
    return build_benchmark("pronoun_fidelity", {"data_file": str(DATA), **options})


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A random BERT whose vocabulary has every word of the fixture and every family's forms
    as one token, so a hand-written loop can read each form's logit directly."""
    rows = _benchmark().rows
    words = set()
    for sentence in rows["sentence"]:
        words.update(re.findall(r"\w+|[^\w\s]", sentence.replace("[MASK]", " ").lower()))
    words.update(form for family in FAMILIES.values() for form in family.forms)
    root = tmp_path_factory.mktemp("fidelity")
    vocab = root / "vocab.txt"
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(words)]
    vocab.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    folder = build_bert(root / "bert", vocab_file=vocab, seed=11)
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return model, tokenizer


def _hand_scores(model, tokenizer, rows: pd.DataFrame) -> list[dict[str, float]]:
    """ln P(form) at the mask for every family, straight from the logits."""
    out = []
    for row in rows.itertuples(index=False):
        text = row.sentence.replace("[MASK]", tokenizer.mask_token)
        encoded = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            logits = model(**encoded).logits[0]
        position = encoded["input_ids"][0].tolist().index(tokenizer.mask_token_id)
        log_probs = torch.log_softmax(logits[position].double(), dim=-1)
        ids = {f: tokenizer.convert_tokens_to_ids(FAMILIES[f].form(row.case)) for f in FAMILIES}
        out.append({family: float(log_probs[token]) for family, token in ids.items()})
    return out


def _accuracy(values: list[bool]) -> float:
    return sum(values) / len(values)


def test_rows_cover_templates_names_and_families():
    rows = _benchmark().rows
    assert len(rows) == 5 * 3 * 6  # templates x names x families
    first = rows.iloc[0]
    assert first["sentence"] == (
        "Casey uses he/him/his pronouns. Casey was tired, so [MASK] went home."
    )
    generated = build_benchmark("pronoun_fidelity", {}).rows
    assert len(generated) == len(TEMPLATES) * 6 * 6
    assert set(generated["case"]) == set(CASES)
    assert declaration("ze") == "ze/hir/hir"
    assert generated[generated["capitalized"]]["sentence"].str.contains(r"\. \[MASK\]").all()


def test_scores_equal_a_hand_written_loop(tiny):
    model, tokenizer = tiny
    benchmark = _benchmark()
    result = benchmark.evaluate(MaskedLMScorer(model, tokenizer, batch_size=7))
    hand = _hand_scores(model, tokenizer, benchmark.rows)
    for scored, expected in zip(result.rows.itertuples(index=False), hand, strict=True):
        for family in FAMILIES:
            assert getattr(scored, f"log_prob_{family}") == pytest.approx(
                expected[family], abs=1e-6
            )
    predicted = [max(scores, key=scores.get) for scores in hand]
    correct = [p == d for p, d in zip(predicted, benchmark.rows["declared"], strict=True)]
    assert result.metrics["accuracy"] == pytest.approx(_accuracy(correct), abs=1e-12)
    declared = list(benchmark.rows["declared"])
    for family in FAMILIES:
        own = [c for c, d in zip(correct, declared, strict=True) if d == family]
        assert result.metrics[f"accuracy_{family}"] == pytest.approx(_accuracy(own))
    neutral = [i for i, d in enumerate(declared) if d not in ("he", "she")]
    misgendered = [predicted[i] in ("he", "she") for i in neutral]
    assert result.metrics["misgendering_rate"] == pytest.approx(_accuracy(misgendered))


def test_planted_model_that_always_fills_they(tiny):
    model, tokenizer = tiny
    planted = type(model).from_pretrained(model.name_or_path).eval()
    they = [tokenizer.convert_tokens_to_ids(form) for form in FAMILIES["they"].forms]
    with torch.no_grad():
        planted.cls.predictions.bias[they] += 100.0
    result = _benchmark().evaluate(MaskedLMScorer(planted, tokenizer))
    assert result.metrics["accuracy_they"] == 1.0
    assert all(result.metrics[f"accuracy_{f}"] == 0.0 for f in FAMILIES if f != "they")
    assert result.metrics["accuracy"] == pytest.approx(1 / 6)
    assert result.metrics["misgendering_rate"] == 0.0  # they is not a binary form
    for case in CASES:
        assert result.metrics[f"accuracy_{case}"] == pytest.approx(1 / 6)
    low, high = (
        result.summary["per_family"]["they"]["ci_low"],
        result.summary["per_family"]["they"]["ci_high"],
    )
    # Wilson interval of 15/15 at 95%: [15 / (15 + 1.96^2), 1].
    assert low == pytest.approx(15 / (15 + 1.959964**2), abs=1e-6) and high == 1.0
    report = _benchmark().format_report(result.summary)
    assert "misgendering rate  0.000" in report


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "case\ttemplate\nnominative\t{name} went home, said {mask}.\n",
            "no declared-pronoun slot {pronouns}",
        ),
        ("case\ttemplate\nnominative\t{name} uses {pronouns}. {name} left.\n", "no {mask}"),
        ("case\ttemplate\nnominative\tThey use {pronouns}. {mask} left.\n", "no {name}"),
        (
            "case\ttemplate\ngenitive\t{name} uses {pronouns}. {mask} left.\n",
            "unknown case 'genitive'",
        ),
        ("case\tsentence\nnominative\tx\n", "no 'template' column"),
        ("case\ttemplate\nnominative\t{name} {pronouns} {mask} {mask}\n", "2 {mask} slots"),
    ],
)
def test_bad_template_files(tmp_path, text, message):
    path = tmp_path / "templates.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CdsbiasError) as error:
        read_templates(path)
    assert message in str(error.value) and str(path) in str(error.value)
    assert "\n" not in str(error.value)


def test_bad_template_file_from_the_command_line(tmp_path, tiny_bert, capsys):
    path = tmp_path / "templates.tsv"
    path.write_text(
        "case\ttemplate\nnominative\t{name} went home, said {mask}.\n", encoding="utf-8"
    )
    out = tmp_path / "out"
    capsys.readouterr()
    code = main(
        [
            "evaluate",
            str(tiny_bert),
            "-b",
            "pronoun_fidelity",
            "--data",
            str(path),
            "--out",
            str(out),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "declared-pronoun slot" in err and not out.exists()


def test_unknown_family_option_has_a_did_you_mean():
    with pytest.raises(CdsbiasError, match="Did you mean 'xe'"):
        _benchmark(families=["xee"])


def test_card_and_tracker_table(tiny):
    from cdsbias.benchmarks import Snapshot

    model, tokenizer = tiny
    benchmark = _benchmark()
    result = benchmark.evaluate(MaskedLMScorer(model, tokenizer))
    columns, rows = benchmark.tracker_tables(result)["pronoun_fidelity"]
    assert columns[:3] == ["group", "name", "accuracy"] and len(rows) == len(FAMILIES) + len(CASES)
    card = benchmark.card_section(None, Snapshot(10, result.metrics, result.summary))
    assert "| xe |" in card and "misgendering" in card
    assert not math.isnan(result.metrics["accuracy_neutral"])


def test_a_vocabulary_without_the_forms_is_one_clear_error(tiny_bert):
    with pytest.raises(CdsbiasError, match=r"pronoun_fidelity: Target word .* unknown token"):
        _benchmark().evaluate(MaskedLMScorer.from_pretrained(str(tiny_bert)))


def test_families_option_narrows_rows_and_candidates(tiny):
    model, tokenizer = tiny
    benchmark = _benchmark(families=["he", "she", "they"])
    result = benchmark.evaluate(MaskedLMScorer(model, tokenizer))
    assert len(result.rows) == 5 * 3 * 3
    assert not any(column.startswith("log_prob_xe") for column in result.rows.columns)
    hand = _hand_scores(model, tokenizer, benchmark.rows)
    predicted = [max(("he", "she", "they"), key=scores.get) for scores in hand]
    assert list(result.rows["predicted"]) == predicted
