"""Training with ``cds_language``: the recipe key reaches the mapper, a Danish corpus is
swapped with the Danish rules, and the callback scores a Danish benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdsbias.errors import CdsbiasError
from cdsbias.runs.points import read_points
from cdsbias.train.config import load_recipe
from cdsbias.train.data import counterfactual_mapper
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


#: BEC-Pro DE's person words, so that the tiny run's own tokenizer has each as one token.
GERMAN_PERSONS = [("Vater", "Mutter"), ("Sohn", "Tochter"), ("Bruder", "Schwester"),
                  ("Onkel", "Tante"), ("Freund", "Freundin"), ("Ehemann", "Frau"),
                  ("Mann", "Frau"), ("Papa", "Mama")]  # fmt: skip


def german_corpus(path: Path) -> Path:
    rows = []
    for i in range(80):
        male, female = GERMAN_PERSONS[i % len(GERMAN_PERSONS)]
        if i % 3:
            text = f"Mein {male} ist Arzt. Er sagte, dass er müde war."
        else:
            text = f"Meine {female} ist Ärztin. Sie sagte, dass sie müde war."
        rows.append({"text": text})
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


#: Per language: the corpus writer, the benchmark the callback scores, and whether it needs
#: the shared data folder. German runs once its module is registered (cds_language: de).
RUNS = {
    "da": (danish_corpus, lambda data: {"dawinobias": {"data_file": str(DAWINOBIAS)}}),
    "de": (
        german_corpus,
        lambda data: {
            "becpro": {"language": "de", "data_file": str(data / "bec-pro" / "BEC-Pro_DE.tsv")}
        },
    ),
}


@pytest.mark.parametrize("code", sorted(RUNS))
def test_short_run_swaps_with_the_language_rules_and_scores_its_benchmark(
    tmp_path, recwarn, request, code
):
    from cdsbias.cds.languages import LANGUAGES

    if code not in LANGUAGES:
        pytest.skip(f"CDS language '{code}' is not registered")
    data = request.getfixturevalue("shared_data") if code == "de" else None
    write_corpus, benchmarks = RUNS[code]
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    out = tmp_path / "run"
    code_run = train_main(
        [str(SMOKE), f"output_dir={out}", "dataset=json", f"data_files={corpus}",
         f"cds_language={code}", f"bias_benchmarks={json.dumps(benchmarks(data))}",
         "max_steps=2", "save_steps=2", "report_to=none"]
    )  # fmt: skip
    assert code_run == 0
    points = read_points(out)
    assert [p["step"] for p in points] == [0, 2]
    (name,) = benchmarks(data)
    assert points[-1]["benchmarks"][name]["metrics"]
    # The corpus with its own language's rules: no language-mismatch warning.
    assert not [w for w in recwarn if "CDS changes almost nothing" in str(w.message)]


def test_danish_corpus_with_english_rules_warns_naming_the_key(tmp_path):
    corpus = danish_corpus(tmp_path / "corpus.jsonl")
    texts = [json.loads(line)["text"] for line in corpus.read_text().splitlines()]
    english = counterfactual_mapper(load_recipe(SMOKE, ["output_dir=x"]).cds, ["text"])
    with pytest.warns(UserWarning, match="looks Danish, not English.*cds_language: da"):
        english({"text": texts})
