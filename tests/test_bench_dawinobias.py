"""DaWinoBias (GenDa Lens LM task): parser quirks, GenDa Lens metrics by hand, bad input."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import build_bert
from test_bench_winobias import boosted_copy, check_against_sklearn, hand_predictions

from cdsbias.benchmarks.dawinobias import DaWinoBias
from cdsbias.benchmarks.masked_pronoun_data import genda_tokens
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

ASSETS = Path(__file__).parent / "assets" / "dawinobias"
PRONOUNS = ["han", "hun", "ham", "hende", "hans", "hendes"]
DANISH_WORDS = [
    "udvikleren",
    "diskuterede",
    "med",
    "designeren",
    "fordi",
    "ikke",
    "kunne",
    "lide",
    "designet",
    "ide",
    "kan",
    "implementeres",
    "mekanikeren",
    "kiggede",
    "forbi",
    "bibliotekaren",
    "bil",
    "slukkede",
    "sælgeren",
    "forsøgte",
    "at",
    "overtale",
    "frisøren",
    "til",
    "købe",
    "noget",
    "og",
    "lykkedes",
    "lederen",
    "gav",
    "husholdersken",
    "drikkepenge",
    "takkede",
    ",",
    ".",
]
# GenDa Lens' group_pronouns(), written out: every form of each gender, per slot for choice.
FORMS = {
    "subject": (["hun"], ["han"]),
    "object": (["hende"], ["ham"]),
    "possessive": (["hendes"], ["hans"]),
}
FEMALE_ALL, MALE_ALL = {"hun", "hende", "hendes"}, {"han", "ham", "hans"}


def _danish_bert(folder: Path, pronouns: list[str], extra: tuple[str, ...] = ()) -> Path:
    vocab = folder.parent / f"{folder.name}-vocab.txt"
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *pronouns, *DANISH_WORDS, *extra]
    vocab.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return build_bert(folder, vocab_file=vocab, seed=11)


@pytest.fixture(scope="module")
def danish_model(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("danish")
    plain = _danish_bert(root / "plain", PRONOUNS)
    # Favour some pronouns so that the top-1 prediction is sometimes a pronoun, sometimes not.
    return boosted_copy(plain, root / "boosted", ["han", "hun", "hende"], 3.5)


def _load(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = DaWinoBias(data_file=ASSETS, **options)
        return bench, bench.load()


def test_fixture_quirks_are_parsed_genda_style():
    with pytest.warns(UserWarning, match=r"DaWinoBias_pro_stereotyped_evalda\.txt:4"):
        rows = DaWinoBias(data_file=ASSETS).load()
    assert len(rows) == 10
    pro = rows[rows["condition"] == "pro"].set_index("line")
    assert pro.loc[1, "masked"] == (
        "udvikleren diskuterede med designeren , fordi [MASK] ikke kunne lide designet ."
    )
    assert pro.loc[2, "masked"] == (  # trailing space
        "udvikleren diskuterede med designeren , fordi [MASK] idé ikke kan implementeres ."
    )
    # Double space and CRLF: spaCy keeps a whitespace token, so GenDa Lens' text has 3 spaces.
    assert pro.loc[3, "masked"] == (
        "mekanikeren kiggede forbi   bibliotekaren , fordi [MASK] bil slukkede ."
    )
    assert pro.loc[4, "quirk"] == "unbracketed pronoun"  # line 431 of the real files
    assert pro.loc[4, "pronoun"] == "han"
    assert (pro.loc[5, "pronoun"], pro.loc[5, "slot"], pro.loc[5, "gender"]) == (
        "hende",
        "object",
        "female",
    )
    assert list(rows[rows["condition"] == "anti"]["pronoun"]) == [
        "hun",
        "hans",
        "hans",
        "hun",
        "ham",
    ]
    _, original = _load(text="original")
    assert original.iloc[0]["masked"] == (
        "Udvikleren diskuterede med designeren, fordi [MASK] ikke kunne lide designet."
    )


def test_genda_lens_metrics_by_hand(danish_model):
    scorer = MaskedLMScorer.from_pretrained(str(danish_model))
    bench, rows = _load()
    scored = bench.score(scorer, rows)
    expected = hand_predictions(danish_model, scored, FORMS, FEMALE_ALL, MALE_ALL, lower=False)
    for (_, got), (token, top1, lp_f, lp_m) in zip(scored.iterrows(), expected, strict=True):
        assert got["top1_token"] == token
        assert got["top1_gender"] == top1
        assert got["log_prob_female"] == pytest.approx(lp_f, abs=1e-4)
        assert got["log_prob_male"] == pytest.approx(lp_m, abs=1e-4)
    assert {"female", "male"} <= set(scored["top1_gender"])
    summary, metrics = bench.summarize(scored)
    check_against_sklearn(scored, summary)
    top1 = summary["top1"]
    pro, anti = top1["pro"]["accuracy"], top1["anti"]["accuracy"]
    assert metrics["pro_accuracy"] == pro  # top1 is the headline mode, as in GenDa Lens
    # GenDa Lens rounds the accuracies with pandas (numpy), then the log2 ratio with round().
    rounded_pro, rounded_anti = float(np.round(pro, 2)), float(np.round(anti, 2))
    if rounded_pro > 0 and rounded_anti > 0:
        assert top1["gender_effect_genda_rounded"] == round(
            math.log2(rounded_pro / rounded_anti), 2
        )
    assert metrics["top1_anti_f1_female"] == top1["anti"]["f1_female"]
    assert "hun/han" in bench.format_report(summary)


def test_english_model_errors_naming_the_pronoun(tiny_bert):
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert))
    bench, rows = _load()
    with pytest.raises(
        CdsbiasError, match="pronoun 'hun' is not in this model's vocabulary"
    ) as error:
        bench.score(scorer, rows)
    assert "Danish" in str(error.value)


def test_wrong_language_model_warns_with_the_fix(real_vocab_bert):
    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert))
    bench, rows = _load()
    with pytest.warns(UserWarning, match="no single token for the pronoun") as record:
        bench.score(scorer, rows)
    message = str(record[0].message)
    assert "'hun'" in message and "--benchmark winobias" in message


def test_multi_piece_pronoun_warns(tmp_path):
    folder = _danish_bert(tmp_path / "nohendes", [p for p in PRONOUNS if p != "hendes"], ("##s",))
    scorer = MaskedLMScorer.from_pretrained(str(folder))
    bench, rows = _load()
    with pytest.warns(UserWarning, match="'hendes'"):
        scored = bench.score(scorer, rows)
    # The forced choice still scores "hendes" (hende + ##s, chain rule).
    assert scored["log_prob_female"].notna().all()


def test_language_option():
    assert DaWinoBias(language="da").language == "da"
    assert DaWinoBias().language == "da"
    for language in ("en", "de"):
        with pytest.raises(CdsbiasError, match=f"no '{language}' data; it supports da"):
            DaWinoBias(language=language)


def test_real_files_parse_completely(shared_data):
    with pytest.warns(UserWarning, match="431"):
        rows = DaWinoBias(data_file=shared_data / "genda-lens-danish").load()
    assert len(rows) == 2 * 674
    anti = rows[rows["condition"] == "anti"]
    assert anti["pronoun"].value_counts().to_dict() == {
        "han": 319,
        "hun": 319,  # SOURCE.md counts 318 bracketed + the unbracketed one of line 431
        "hendes": 15,
        "hans": 14,
        "ham": 4,
        "hende": 3,
    }
    assert list(rows[rows["quirk"] != ""]["line"]) == [431, 431]
    assert not rows["masked"].str.contains("\r", regex=False).any()
    # Line 215 ends in "gavmild.." (spaCy keeps ".." as one token); line 412 has a double space.
    pro = rows[rows["condition"] == "pro"].set_index("line")
    assert pro.loc[215, "masked"].endswith("fordi [MASK] var gavmild ..")
    assert "forbi   bibliotekaren" in pro.loc[412, "masked"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Han var gavmild..", "han var gavmild .."),
        ("(Lederen) gav, og tog!", "( lederen ) gav , og tog !"),
        ("e-mail 3.5 ok.", "e-mail 3.5 ok ."),
        ("a  b   c", "a   b    c"),  # expected strings checked against spaCy 3.8
    ],
)
def test_genda_tokens_reproduce_spacy_joining(text, expected):
    assert genda_tokens(text) == expected
