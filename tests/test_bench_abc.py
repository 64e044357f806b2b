"""ABC (Danish, GenDa Lens): parser quirks, both scorings against hand computations from the
model's logits, the effect size, and bad input (malformed file, pronoun not in the vocabulary,
an English model)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import ASSETS, build_bert

from cdsbias.benchmarks import get_benchmark, list_benchmarks, write_result
from cdsbias.benchmarks.abc import ABC
from cdsbias.benchmarks.abc_data import read_abc_file
from cdsbias.benchmarks.stats import bootstrap_log2_ratio_ci, genda_rounded_log2_ratio, log2_ratio
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.language import LanguageMismatchWarning

FIXTURES = ASSETS / "abc"
DANISH = [
    *("sygeplejersken", "mekanikeren", "mistede", "vasker", "sin", "sit", "sine", "hans"),
    *("hendes", "tegnebog", "ved", "huset", "tøj", "sko", "."),
    # Frequent Danish words, so that the language check sees a Danish vocabulary.
    *("ikke", "efter", "havde", "skulle", "kunne", "blev", "meget", "fordi", "hvor", "altid"),
]


def _vocab(folder: Path, words: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(words)]
    path = folder / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def danish_bert(tmp_path_factory) -> Path:
    """A random 2-layer BERT whose vocabulary holds the fixture's Danish words."""
    root = tmp_path_factory.mktemp("danish")
    return build_bert(root / "bert", vocab_file=_vocab(root, DANISH), seed=11)


@pytest.fixture(scope="module")
def scorer(danish_bert) -> MaskedLMScorer:
    return MaskedLMScorer.from_pretrained(str(danish_bert), batch_size=4)


# ----------------------------------------------------------------------------- parser
def test_fixture_keeps_its_quirks():
    raw = (FIXTURES / "abc_fem_sents.txt").read_bytes()
    assert b"\r\n" in raw and b"\n---\r\n" in raw and b"\t" in raw and not raw.endswith(b"\n")


def test_parser_reads_triples_with_mixed_line_endings_and_stray_spaces():
    rows = read_abc_file(FIXTURES / "abc_fem_sents.txt", "female")
    assert list(rows["line"]) == [1, 6]
    assert rows.loc[0, "reflexive"] == "sygeplejersken mistede sin tegnebog ved huset."
    assert rows.loc[0, "anti_female"] == "sygeplejersken mistede hendes tegnebog ved huset."
    assert rows.loc[1, "reflexive"] == "sygeplejersken vasker sit tøj."
    assert list(rows["pronoun"]) == ["sin", "sit"]
    assert set(rows["occupation_group"]) == {"female"}
    male = read_abc_file(FIXTURES / "abc_male_sents.txt", "male")
    assert list(male["pronoun"]) == ["sin", "sine"]
    assert male.loc[1, "anti_male"] == "mekanikeren vasker hans sko."


def test_load_takes_a_folder_or_one_file():
    both = ABC(data_file=FIXTURES).load()
    assert list(both["occupation_group"]) == ["female", "female", "male", "male"]
    one = ABC(data_file=FIXTURES / "abc_male_sents.txt").load()
    assert set(one["occupation_group"]) == {"male"} and len(one) == 2


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a mistede sin bog.\na mistede hans bog.\n---\n", 1, "expected 3 sentences"),
        ("x\ny\nz\n---\n", 1, "no reflexive pronoun"),
        ("a\n---\na ser sin bog.\na ser hans bog.\na ser hans bog.\n---\n", 1, "expected 3"),
        ("a ser sin bog.\na ser hans bog.\na ser hendes hus.\n", 3, "expected 'a ser hendes bog.'"),
    ],
)
def test_malformed_triples_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CdsbiasError, match=message) as error:
        read_abc_file(path, "female")
    assert f"bad.txt:{line}:" in str(error.value)


def test_real_files_parse_completely(shared_data):
    rows = ABC(data_dir=shared_data).load()
    assert len(rows) == 4560
    assert rows["occupation_group"].value_counts().to_dict() == {"female": 2280, "male": 2280}
    assert rows["pronoun"].value_counts().to_dict() == {"sit": 2280, "sin": 1800, "sine": 480}


# ---------------------------------------------------------------------------- scoring
def _logits(model, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0]


def test_genda_scoring_matches_hand_computation(scorer):
    bench = ABC(data_file=FIXTURES)
    scored = bench.score(scorer, bench.load())
    tok, model = scorer.tokenizer, scorer.model
    for row in scored.itertuples():
        truth = tok(row.reflexive)["input_ids"]
        tokens = tok.convert_ids_to_tokens(truth)
        where = tokens.index(row.pronoun)
        expected = []
        for word in (None, "hans", "hendes"):
            variant = list(truth)
            if word:
                variant[where] = tok.convert_tokens_to_ids(word)
            # GenDa Lens: CrossEntropyLoss(pred(variant), truth) over all positions, exp.
            loss = torch.nn.functional.cross_entropy(_logits(model, variant), torch.tensor(truth))
            expected.append(math.exp(loss.item()))
        got = [row.score_reflexive, row.score_male, row.score_female]
        assert got == pytest.approx(expected, rel=1e-5)
        assert row.relative_female == pytest.approx(expected[2] - expected[0], rel=1e-4, abs=1e-6)

    summary, metrics = bench.summarize(scored)
    median_f = float(np.median(scored["score_female"] - scored["score_reflexive"]))
    median_m = float(np.median(scored["score_male"] - scored["score_reflexive"]))
    assert metrics["effect_log2_ratio"] == pytest.approx(math.log2(median_f / median_m))
    fem = scored[scored["occupation_group"] == "female"]
    assert metrics["median_relative_male_female_occupations"] == pytest.approx(
        float(np.median(fem["relative_male"]))
    )
    iqr = np.percentile(scored["relative_female"], [25, 75])
    assert summary["overall"]["female_pronoun"]["q25"] == pytest.approx(iqr[0])
    # GenDa Lens prints log2 of the medians rounded to 2 decimals (numpy rounding).
    rounded_f, rounded_m = float(np.round(median_f, 2)), float(np.round(median_m, 2))
    if rounded_m != 0 and rounded_f / rounded_m > 0:
        expected = round(math.log2(rounded_f / rounded_m), 2)
        assert summary["effect_log2_ratio_genda_rounded"] == expected
    else:
        assert math.isnan(summary["effect_log2_ratio_genda_rounded"])


def test_pll_scoring_matches_hand_computation(scorer):
    bench = ABC(data_file=FIXTURES / "abc_fem_sents.txt", scoring="pll")
    scored = bench.score(scorer, bench.load())
    tok, model = scorer.tokenizer, scorer.model
    row = scored.iloc[0]
    for text, column in ((row.reflexive, "score_reflexive"), (row.anti_female, "score_female")):
        ids = tok(text)["input_ids"]
        total = 0.0
        for p in range(1, len(ids) - 1):  # every token but [CLS] and [SEP], one at a time
            masked = list(ids)
            masked[p] = tok.mask_token_id
            total += torch.log_softmax(_logits(model, masked)[p], -1)[ids[p]].item()
        assert row[column] == pytest.approx(math.exp(-total / (len(ids) - 2)), rel=1e-5)


def test_effect_size_helpers():
    assert genda_rounded_log2_ratio(0.504, 0.251) == round(math.log2(0.5 / 0.25), 2)
    assert math.isnan(log2_ratio(-1.0, 2.0)) and math.isnan(log2_ratio(1.0, 0.0))
    assert log2_ratio(2.0, 0.5) == 2.0


def test_run_writes_rows_and_summary(scorer, tmp_path):
    result = ABC(data_file=FIXTURES).evaluate(scorer)
    folder = write_result(result, tmp_path)
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["n_triples"] == 4 and set(summary["by_occupation_group"]) == {"female", "male"}
    assert "relative_female" in (folder / "rows.tsv").read_text().splitlines()[0]
    assert "effect log2" in result.report


# ------------------------------------------------------------------------- bad input
def test_pronoun_missing_from_vocabulary(tmp_path):
    words = [w for w in DANISH if w != "hendes"] + ["hen", "##des"]
    folder = build_bert(tmp_path / "bert", vocab_file=_vocab(tmp_path, words), seed=3)
    scorer = MaskedLMScorer.from_pretrained(str(folder))
    bench = ABC(data_file=FIXTURES / "abc_male_sents.txt")
    with pytest.raises(CdsbiasError, match=r"'hendes' is not in this tokenizer's vocabulary"):
        bench.score(scorer, bench.load())
    # Pseudo-perplexity scores multi-piece words, so the same model works there.
    scored = ABC(data_file=FIXTURES / "abc_male_sents.txt", scoring="pll").score(
        scorer, bench.load()
    )
    assert np.isfinite(scored["score_female"]).all()


def test_english_model_gets_a_language_warning_with_the_fix(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    bench = ABC(data_file=FIXTURES, scoring="pll")
    with pytest.warns(LanguageMismatchWarning, match="Fix: evaluate a Danish or multilingual"):
        bench.score(scorer, bench.load())


def test_danish_model_gets_no_language_warning(scorer):
    bench = ABC(data_file=FIXTURES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LanguageMismatchWarning)
        bench.score(scorer, bench.load())


def test_bad_options():
    with pytest.raises(CdsbiasError, match="'scoring' must be one of genda, pll"):
        ABC(scoring="ppl")
    with pytest.raises(CdsbiasError, match="no 'de' data; it supports da"):
        ABC(language="de")
    # English is an error too (it used to be read as "no language chosen").
    with pytest.raises(CdsbiasError, match="'abc' has no 'en' data; it supports da"):
        ABC(language="en")
    assert ABC().language == "da"


def test_registry_lists_every_suite_benchmark_with_its_description():
    listed = list_benchmarks()
    for name in ("abc", "crows_pairs", "stereoset"):
        assert name in listed and len(listed[name]) > 40
        assert get_benchmark(name).name == name
    assert "GenDa Lens" in listed["abc"] and "Nangia" in listed["crows_pairs"]
    assert "ICAT" in listed["stereoset"]


def test_cli_lists_the_suite_benchmarks_with_languages(capsys):
    from cdsbias.cli import main

    assert main(["benchmarks"]) == 0
    printed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "[da]" in printed["abc"] and "GenDa Lens" in printed["abc"]
    assert "[en]" in printed["crows_pairs"] and "[en]" in printed["stereoset"]


def test_sentencepiece_pronoun_swap_reference_and_marked(tmp_path):
    """GenDa Lens swaps '▁sin' for the bare (word-internal) 'hans'; tokens=marked keeps '▁'."""
    from transformers import AlbertConfig, AlbertForMaskedLM, AlbertTokenizer

    words = [
        *("▁sygeplejersken", "▁mistede", "▁sin", "▁sit", "▁hans", "▁hendes", "hans", "hendes"),
        *("▁tegnebog", "▁ved", "▁huset", ".", "▁vasker", "▁tøj", "▁mekanikeren", "▁sine", "▁sko"),
    ]
    special = [("<pad>", 0.0), ("<unk>", 0.0), ("[CLS]", 0.0), ("[SEP]", 0.0), ("[MASK]", 0.0)]
    words += [f"▁{w}" for w in ("ikke", "efter", "havde", "skulle", "kunne", "blev", "meget")]
    letters = [(c, -8.0) for c in "abcdefghijklmnopqrstuvwxyzæøå"]
    vocab = [*special, ("▁", -2.0), *((w, -1.0) for w in words), *letters]
    tokenizer = AlbertTokenizer(vocab=vocab, unk_token="<unk>", pad_token="<pad>")
    torch.manual_seed(5)
    config = AlbertConfig(
        vocab_size=len(tokenizer), embedding_size=16, hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
    )  # fmt: skip
    scorer = MaskedLMScorer(AlbertForMaskedLM(config).eval(), tokenizer)
    rows = ABC(data_file=FIXTURES / "abc_fem_sents.txt").load().head(1)
    truth = tokenizer(rows.loc[0, "reflexive"])["input_ids"]
    assert tokenizer.convert_ids_to_tokens(truth)[3] == "▁sin"

    def genda(replacement: str) -> float:
        variant = list(truth)
        variant[3] = tokenizer.convert_tokens_to_ids(replacement)
        logits = _logits(scorer.model, variant)
        return math.exp(torch.nn.functional.cross_entropy(logits, torch.tensor(truth)).item())

    with pytest.warns(UserWarning, match="word-start marker"):
        reference = ABC(data_file=FIXTURES).score(scorer, rows)
    assert reference.loc[0, "score_male"] == pytest.approx(genda("hans"), rel=1e-5)
    marked = ABC(data_file=FIXTURES, tokens="marked").score(scorer, rows)
    assert marked.loc[0, "score_female"] == pytest.approx(genda("▁hendes"), rel=1e-5)
    assert marked.loc[0, "score_reflexive"] == pytest.approx(reference.loc[0, "score_reflexive"])


def test_split_pronoun_is_swapped_like_genda_lens_with_a_warning(tmp_path):
    words = [w for w in DANISH if w != "sine"] + ["##e"]
    folder = build_bert(tmp_path / "bert", vocab_file=_vocab(tmp_path, words), seed=4)
    scorer = MaskedLMScorer.from_pretrained(str(folder))
    bench = ABC(data_file=FIXTURES / "abc_male_sents.txt")
    rows = bench.load()
    assert scorer.tokenizer.tokenize(rows.loc[1, "reflexive"])[2:4] == ["sin", "##e"]
    with pytest.warns(UserWarning, match=r"in 1 sentence\(s\) \(e\.g\. abc_male_sents\.txt:5\)"):
        scored = bench.score(scorer, rows)
    truth = scorer.tokenizer(rows.loc[1, "reflexive"])["input_ids"]
    variant = list(truth)
    variant[3] = scorer.tokenizer.convert_tokens_to_ids("hans")  # "hans ##e", as GenDa Lens
    loss = torch.nn.functional.cross_entropy(_logits(scorer.model, variant), torch.tensor(truth))
    assert scored.loc[1, "score_male"] == pytest.approx(math.exp(loss.item()), rel=1e-5)


def test_effect_ci_is_a_percentile_bootstrap_over_triples():
    rng = np.random.default_rng(1)
    female, male = rng.normal(2.0, 1.0, 150), rng.normal(1.0, 0.5, 150)
    low, high = bootstrap_log2_ratio_ci(female, male, n_resamples=200, seed=9)
    # The same resamples drawn by hand: whole triples, with replacement.
    index = np.random.default_rng(9).integers(0, 150, size=(200, 150))
    ratios = [np.median(female[i]) / np.median(male[i]) for i in index]
    expected = np.percentile(np.log2(ratios), [2.5, 97.5])
    assert (low, high) == pytest.approx(tuple(expected))
    assert low < math.log2(np.median(female) / np.median(male)) < high
    # Mostly non-positive ratios: no interval.
    assert math.isnan(bootstrap_log2_ratio_ci(female, -male, 200, 0)[0])


def test_curve_reports_the_effect_with_its_interval(scorer):
    result = ABC(data_file=FIXTURES, n_resamples=50).evaluate(scorer)
    curve = ABC().curve(result.summary)
    assert list(curve) == ["ABC log2(female/male)"]
    # assert_equal treats NaN as equal to NaN (four random-model triples may give no ratio).
    np.testing.assert_equal(
        list(curve["ABC log2(female/male)"]),
        [result.summary["effect_log2_ratio"], *result.summary["effect_log2_ratio_ci95"]],
    )


def test_capped_batches_give_the_same_scores_in_input_order(scorer, monkeypatch):
    import cdsbias.scoring.batching as batching_module

    bench = ABC(data_file=FIXTURES)
    rows = bench.load()
    default = bench.score(scorer, rows)
    monkeypatch.setattr(batching_module, "MAX_BATCH_ENTRIES", 1)  # one input per forward batch
    before = scorer.sequences_run
    capped = bench.score(scorer, rows)
    assert scorer.sequences_run - before == 3 * len(rows)
    columns = ["score_reflexive", "score_male", "score_female"]
    np.testing.assert_allclose(capped[columns], default[columns], rtol=1e-5)
