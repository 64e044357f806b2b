"""German CDS output is locked: the edits, skips and texts of tests/assets/cds/de_identity.jsonl.

The fixture holds 386 varied German documents (templated sentences over random person
nouns of the lexicon, names, titles, compounds and gender-fair forms; the gold sources;
ordinary prose from german_text.txt; a few edge cases) with what ``German()``,
``German(agreement=False)`` and ``German(names=False)`` made of them when it was recorded.
Speed work on the German rules must leave every byte of it unchanged. Re-record (only
when the rules change on purpose) with ``python tests/test_cds_german_identity.py > new.jsonl``
and move ``new.jsonl`` over the fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdsbias.cds.corpus import CounterfactualMapper
from cdsbias.cds.engine import apply_edits
from cdsbias.cds.languages.base import Skip
from cdsbias.cds.languages.de import _WORDS_AND_GAPS, WORD, German
from cdsbias.cds.languages.de_tokens import Tokens

FIXTURE = Path(__file__).parent / "assets" / "cds" / "de_identity.jsonl"
VARIANTS = {
    "full": {},
    "naive": {"agreement": False},
    "no_names": {"names": False},
}


def outputs(languages: dict[str, German], text: str) -> dict:
    """Everything the German rules make of ``text``, as JSON-ready values."""
    record: dict = {"text": text}
    for variant, language in languages.items():
        skipped: list[Skip] = []
        edits = language.edits(text, skipped=skipped)
        record[variant] = {
            "output": apply_edits(text, edits),
            "edits": [
                [edit.start, edit.end, edit.original, edit.replacement, edit.kind] for edit in edits
            ],
            "skips": [list(skip) for skip in skipped],
        }
    return record


def build_languages() -> dict[str, German]:
    return {variant: German(**kwargs) for variant, kwargs in VARIANTS.items()}


def read_fixture() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_fixture_is_varied() -> None:
    records = read_fixture()
    assert len(records) >= 300
    changed = sum(record["full"]["edits"] != [] for record in records)
    kinds = {edit[4] for record in records for edit in record["full"]["edits"]}
    assert changed >= 250
    assert {"noun", "determiner", "adjective", "relative", "pronoun", "possessive"} <= kinds
    assert {"name", "title"} <= kinds
    assert any(record["full"]["skips"] for record in records)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_german_output_is_unchanged(variant: str) -> None:
    language = German(**VARIANTS[variant])
    for record in read_fixture():
        now = outputs({variant: language}, record["text"])[variant]
        assert now == record[variant], record["text"]


def test_german_output_is_unchanged_in_one_instance_across_documents() -> None:
    """The caches one instance keeps between documents do not leak state: the fixture
    twice through one instance, the second time in reverse order, gives the same edits."""
    language = German()
    records = read_fixture()
    for record in [*records, *reversed(records)]:
        assert outputs({"full": language}, record["text"])["full"] == record["full"]


def test_german_streamed_and_in_two_processes_gives_the_recorded_outputs() -> None:
    """The training path (CounterfactualMapper, p = 1) over a streamed dataset of two
    shards and over a dataset mapped by two processes writes the recorded texts."""
    datasets = pytest.importorskip("datasets")
    records = read_fixture()
    expected = [record["full"]["output"] for record in records]
    dataset = datasets.Dataset.from_dict({"text": [record["text"] for record in records]})
    mapper = CounterfactualMapper(probability=1.0, language="de")
    streamed = dataset.to_iterable_dataset(num_shards=2).map(mapper, batched=True, batch_size=50)
    assert [row["text"] for row in streamed] == expected
    parallel = dataset.map(mapper, batched=True, batch_size=50, num_proc=2)
    assert parallel["text"] == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "Der Arzt.",
        " «Die Ärztin», sagte er_2 am 3.4. zu Jörg-Peter: 42 x² Ⅻ!\n\nEnde",
        "...und",
        "Straße_Nr7ÄÖÜ ß-ẞ",
    ],
)
def test_tokens_are_the_word_pattern_matches(text: str) -> None:
    """Tokens built from one re.split hold the words and offsets of WORD.finditer and
    the text between them."""
    tokens = Tokens(text, _WORDS_AND_GAPS.split(text))
    matches = list(WORD.finditer(text))
    assert tokens.words == [match.group() for match in matches]
    assert tokens.starts == [match.start() for match in matches]
    assert tokens.ends == [match.end() for match in matches]
    for i in range(len(matches)):
        assert tokens.gap(i) == text[tokens.ends[i - 1] if i else 0 : tokens.starts[i]]


if __name__ == "__main__":
    # Re-records the outputs of the fixture's texts with the current rules (stdout).
    languages = build_languages()
    for record in read_fixture():
        print(json.dumps(outputs(languages, record["text"]), ensure_ascii=False))
