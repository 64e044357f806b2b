"""Training with ``cds_language``: the recipe key reaches the mapper, a Danish corpus is
swapped with the Danish rules, and the callback scores a Danish benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdsbias.errors import CdsbiasError
from cdsbias.train.config import load_recipe
from cdsbias.train.data import counterfactual_mapper
from cdsbias.train.points import read_points
from cdsbias.train.run import main as train_main

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "recipes" / "smoke.yaml"
DAWINOBIAS = REPO / "tests" / "assets" / "dawinobias"
OCCUPATIONS = ["lægen", "sygeplejersken", "mekanikeren", "frisøren", "advokaten", "kokken"]


def danish_corpus(path: Path) -> Path:
    rows = []
    for i in range(80):
        occupation = OCCUPATIONS[i % len(OCCUPATIONS)]
        pronoun, possessive = ("han", "hans") if i % 3 else ("hun", "hendes")
        rows.append(
            {"text": f"{occupation.capitalize()} sagde, at {pronoun} var træt. "
                     f"{possessive.capitalize()} bror kom og hentede {occupation}."}
        )  # fmt: skip
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def test_recipe_key_reaches_the_mapper_and_unknown_codes_are_refused():
    recipe = load_recipe(SMOKE, ["output_dir=x", "cds_language=da"])
    mapper = counterfactual_mapper(recipe.cds, ["text"])
    assert mapper.substituter.code == "da"
    assert mapper({"text": ["Han kom."]})["text"] == ["Hun kom."]
    english = counterfactual_mapper(load_recipe(SMOKE, ["output_dir=x"]).cds, ["text"])
    assert english.substituter.code == "en"
    with pytest.raises(CdsbiasError, match="Unknown CDS language 'dansk'"):
        load_recipe(SMOKE, ["output_dir=x", "cds_language=dansk"])


def test_short_danish_run_swaps_with_danish_rules_and_scores_dawinobias(tmp_path, recwarn):
    corpus = danish_corpus(tmp_path / "corpus.jsonl")
    out = tmp_path / "run"
    benchmarks = json.dumps({"dawinobias": {"data_file": str(DAWINOBIAS)}})
    code = train_main(
        [str(SMOKE), f"output_dir={out}", "dataset=json", f"data_files={corpus}",
         "cds_language=da", f"bias_benchmarks={benchmarks}", "max_steps=2", "save_steps=2",
         "report_to=none"]
    )  # fmt: skip
    assert code == 0
    points = read_points(out)
    assert [p["step"] for p in points] == [0, 2]
    assert points[-1]["benchmarks"]["dawinobias"]["metrics"]
    # The Danish corpus with the Danish rules: no language-mismatch warning.
    assert not [w for w in recwarn if "CDS changes almost nothing" in str(w.message)]
    # The same corpus with the default English rules is noticed.
    with pytest.warns(UserWarning, match="looks Danish, not English.*cds_language: da"):
        english = load_recipe(SMOKE, ["output_dir=x"]).cds
        corpus_texts = [json.loads(line)["text"] for line in corpus.read_text().splitlines()]
        counterfactual_mapper(english, ["text"])({"text": corpus_texts})
