"""pronoun_fidelity on the released MISGENDERED layout: a fixture written in that layout
(tests/assets/pronoun_fidelity_misgendered, README there) loads to the expected rows, its
families score against a hand-written loop, shared forms and multi-piece forms are
reported, and a malformed folder is one ``error:`` line naming the file and the fix."""

from __future__ import annotations

import re
import shutil

import pytest
import torch
from conftest import ASSETS, build_bert

from cdsbias.benchmarks import build_benchmark, load_all
from cdsbias.benchmarks.pronoun_fidelity_released import read_families
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

load_all()
RELEASE = ASSETS / "pronoun_fidelity_misgendered"
FAMILIES = ("he", "she", "they", "e", "xe", "ey", "ze")  # pronouns.csv's order


def _benchmark(data=RELEASE, **options):
    return build_benchmark("pronoun_fidelity", {"data_file": str(data), **options})


def _tiny(root, pieces_of=()):
    """A random BERT knowing every fixture word; the forms in ``pieces_of`` only as pieces
    (WordPiece writes emself as ems + ##elf, xemself as xem + ##self)."""
    rows = _benchmark().rows
    words = set()
    for sentence in rows["sentence"]:
        words.update(re.findall(r"\w+|[^\w\s]", sentence.replace("[MASK]", " ").lower()))
    families = read_families(RELEASE / "pronouns.csv")
    words.update(form for family in families.values() for form in family.forms)
    words -= set(pieces_of)
    vocab = root / "vocab.txt"
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(words), "##self", "##elf"]
    vocab.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    folder = build_bert(root / "bert", vocab_file=vocab, seed=5)
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    return AutoModelForMaskedLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(
        folder
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return _tiny(tmp_path_factory.mktemp("misgendered"))


def test_the_folder_loads_the_declaration_files_to_the_expected_rows():
    rows = _benchmark().rows
    # 2 declaration files x 5 templates x 6 names x 7 families; templates.csv left out.
    assert len(rows) == 2 * 5 * 6 * 7
    assert list(rows["declared"].unique()) == list(FAMILIES)
    assert sorted(rows["declaration"].unique()) == ["explicit_3_2", "parenthetical_2"]
    assert sorted(rows["name_kind"].unique()) == ["female", "male", "unisex"]
    first = rows.iloc[0]
    # "{name}/'s" is filled as "{name}'s"; the declaration names nom/acc/pos_dep.
    assert first["sentence"] == (
        "Riley's pronouns are he/him/his. Riley missed the train. [MASK] walked home instead."
    )
    assert first["case"] == "nominative" and first["capitalized"]
    ze = rows[(rows["declared"] == "ze") & (rows["declaration"] == "parenthetical_2")]
    assert ze.iloc[0]["sentence"].startswith("Riley (ze/zir) missed the train.")
    # The blank and "3.0" template ids of the file become positions 2 and 3.
    explicit = rows[rows["declaration"] == "explicit_3_2"]
    assert sorted(explicit["release_template"].unique()) == [0, 1, 2, 3, 4]
    cases = explicit.drop_duplicates("release_template").set_index("release_template")["case"]
    assert cases[2] == "possessive_dependent" and cases[3] == "possessive_independent"
    assert rows["template_id"].nunique() == 10  # unique across files, for sharding


def test_one_file_of_the_release_and_the_undeclared_list():
    rows = _benchmark(RELEASE / "templates" / "parenth_template_2.csv").rows
    assert len(rows) == 5 * 6 * 7 and set(rows["declaration"]) == {"parenthetical_2"}
    bare = _benchmark(RELEASE / "templates" / "templates.csv").rows
    assert set(bare["declaration"]) == {"none"} and len(bare) == 2 * 6 * 7
    assert bare.iloc[0]["sentence"] == "Riley missed the train. [MASK] walked home instead."


def test_names_per_kind_and_families_options():
    rows = _benchmark(names_per_kind=1, families=["they", "e", "ze"]).rows
    assert sorted(rows["name"].unique()) == ["Linda", "Riley", "Robert"]
    assert list(rows["declared"].unique()) == ["they", "e", "ze"]
    with pytest.raises(CdsbiasError, match="Did you mean 'ze'"):
        _benchmark(families=["zee"])
    # The release's families, not the generated set's: thon is not in this fixture.
    with pytest.raises(CdsbiasError, match="Unknown pronoun family 'thon'"):
        _benchmark(families=["thon"])


def _hand(model, tokenizer, rows):
    """ln P(form) at the mask for every family of pronouns.csv, straight from the logits."""
    families = read_families(RELEASE / "pronouns.csv")
    out = []
    for row in rows.itertuples(index=False):
        encoded = tokenizer(
            row.sentence.replace("[MASK]", tokenizer.mask_token), return_tensors="pt"
        )
        with torch.no_grad():
            logits = model(**encoded).logits[0]
        position = encoded["input_ids"][0].tolist().index(tokenizer.mask_token_id)
        log_probs = torch.log_softmax(logits[position].double(), dim=-1)
        out.append({
            name: float(log_probs[tokenizer.convert_tokens_to_ids(family.form(row.case))])
            for name, family in families.items()
        })  # fmt: skip
    return out


def test_scores_equal_a_hand_written_loop_and_shared_forms_count_for_both(tiny):
    model, tokenizer = tiny
    benchmark = _benchmark()
    result = benchmark.evaluate(MaskedLMScorer(model, tokenizer, batch_size=9))
    hand = _hand(model, tokenizer, benchmark.rows)
    families = read_families(RELEASE / "pronouns.csv")
    correct = []
    for scored, expected in zip(result.rows.itertuples(index=False), hand, strict=True):
        for name in FAMILIES:
            assert getattr(scored, f"log_prob_{name}") == pytest.approx(expected[name], abs=1e-6)
        best = max(FAMILIES, key=lambda f: expected[f])  # first family on a tie
        correct.append(
            families[best].form(scored.case) == families[scored.declared].form(scored.case)
        )
    assert result.metrics["accuracy"] == pytest.approx(sum(correct) / len(correct))
    assert result.summary["shared_forms"] == [
        ("accusative", "em", ["e", "ey"]),
        ("reflexive", "emself", ["e", "ey"]),
    ]
    assert result.summary["families"]["ze"] == "ze/zir/zir/zirs/zirself"
    assert set(result.summary["per_declaration"]) == {"explicit_3_2", "parenthetical_2"}
    report = benchmark.format_report(result.summary)
    assert "accusative form 'em' is shared by e, ey" in report
    assert "by declaration:" in report


def test_planted_model_that_always_fills_ey(tiny):
    """ey's forms win every mask: ey is always right, e is right exactly where it shares
    ey's form (accusative em, reflexive emself), the rest never; nothing is misgendered."""
    model, tokenizer = tiny
    planted = type(model).from_pretrained(model.name_or_path).eval()
    ey = [tokenizer.convert_tokens_to_ids(f) for f in ("ey", "em", "eir", "eirs", "emself")]
    with torch.no_grad():
        planted.cls.predictions.bias[ey] += 100.0
    result = _benchmark().evaluate(MaskedLMScorer(planted, tokenizer))
    metrics = result.metrics
    assert metrics["accuracy_ey"] == 1.0 and metrics["accuracy_e"] == pytest.approx(2 / 5)
    assert all(metrics[f"accuracy_{f}"] == 0.0 for f in ("he", "she", "they", "xe", "ze"))
    assert metrics["misgendering_rate"] == 0.0
    # The tie between e and ey goes to e, pronouns.csv's earlier row, as for MISGENDERED's
    # sort by loss; the row is right either way.
    rows = result.rows
    assert set(rows.loc[rows["case"] == "accusative", "predicted"]) == {"e"}


def test_a_form_the_vocabulary_splits_is_scored_in_pieces_and_reported(tmp_path):
    model, tokenizer = _tiny(tmp_path, pieces_of=("emself", "xemself"))
    benchmark = _benchmark(names_per_kind=1)
    result = benchmark.evaluate(MaskedLMScorer(model, tokenizer))
    pieces = result.summary["pieces"]
    assert pieces["e"]["reflexive"] == 2 and pieces["xe"]["reflexive"] == 2
    assert pieces["he"]["reflexive"] == 1 and pieces["ey"]["nominative"] == 1
    rows = result.rows
    assert (
        rows.loc[(rows["declared"] == "xe") & (rows["case"] == "reflexive"), "pieces"] == 2
    ).all()
    assert "forms scored in several pieces (chain rule): emself (2), xemself (2)" in (
        benchmark.format_report(result.summary)
    )


def _break(folder, how):
    if how == "no pronouns.csv":
        (folder / "pronouns.csv").unlink()
    elif how == "no unisex names":
        (folder / "names" / "unisex.txt").unlink()
    elif how == "pronouns header":
        path = folder / "pronouns.csv"
        path.write_text(path.read_text().replace("pos_indep", "pos_ind"), encoding="utf-8")
    elif how == "unknown form":
        path = folder / "templates" / "parenth_template_2.csv"
        path.write_text(path.read_text().replace("\nacc,", "\naccusative,"), encoding="utf-8")
    elif how == "two masks":
        path = folder / "templates" / "parenth_template_2.csv"
        path.write_text(
            path.read_text().replace("thank {mask_token}", "thank {mask_token} {mask_token}"),
            encoding="utf-8",
        )
    elif how == "no templates":
        for path in (folder / "templates").glob("*_template_*.csv"):
            path.unlink()


@pytest.mark.parametrize(
    ("how", "file", "fix"),
    [
        ("no pronouns.csv", "pronouns.csv", "clone it whole"),
        ("no unisex names", "names/unisex.txt", "clone it whole"),
        ("pronouns header", "pronouns.csv", "the header must be gender_type,gender,nom"),
        ("unknown form", "templates/parenth_template_2.csv:3", "use one of nom, acc"),
        ("two masks", "templates/parenth_template_2.csv:3", "not exactly one {mask_token}"),
        ("no templates", "templates", "no {explicit,parenth}_template_*.csv files"),
    ],
)
def test_a_malformed_release_folder_is_one_error_line(how, file, fix, tmp_path, tiny_bert, capsys):
    folder = tmp_path / "misgendered"
    shutil.copytree(RELEASE, folder)
    _break(folder, how)
    out = tmp_path / "out"
    capsys.readouterr()
    code = main(["evaluate", str(tiny_bert), "-b", "pronoun_fidelity", "--data", str(folder),
                 "--out", str(out), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert str(folder / file) in err and fix in err, err
    assert not out.exists()


def test_a_path_that_is_neither_says_there_is_no_hub_dataset(tmp_path):
    benchmark = _benchmark(tmp_path / "tamannahossainkay/misgendered")
    with pytest.raises(CdsbiasError, match="no hub dataset"):
        benchmark.load()
