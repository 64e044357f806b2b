"""The English axis-substitution rules on the development and held-out gold sets.

The development set (tests/assets/cds/gold_en_axes.tsv) was written with the rules and
tuned on; the held-out set (gold_en_axes_heldout.tsv) was written after they were frozen.
Its floor was the score measured then (34 of 36 sentences); it is 35 since names of peoples
coordinate like axis words ("Black and Hispanic workers", issue 37; docs/axes.md).
gold_en_axes_people_heldout.tsv holds issue 37's classes (ordinals, possessive person
nouns, predicative and nominal colour words, person nouns, name-rule misfires), written
before those rules were fixed; its floor is the score measured after them (61 of 63).
No set may have a word changed that its gold keeps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cdsbias.cds.axis_gold import (
    axis_gold_outputs,
    collateral_words,
    parse_mapping,
    read_axis_gold,
    score_axis_gold,
)
from cdsbias.errors import CdsbiasError

ASSETS = Path(__file__).resolve().parent / "assets" / "cds"


def test_development_set_covers_the_phenomena_and_is_all_right():
    rows = read_axis_gold(ASSETS / "gold_en_axes.tsv")
    assert len(rows) >= 60
    scores = score_axis_gold(rows)
    for phenomenon in ("article", "capitals", "plural", "punctuation", "noun", "unchanged"):
        assert scores[phenomenon].sentences >= 2
    for phenomenon in ("ordinal", "possessive", "predicative", "nominal", "person", "name"):
        assert scores[phenomenon].sentences >= 2
    assert scores["all"].exact == scores["all"].sentences


def test_held_out_set_scores_its_measured_floor():
    rows = read_axis_gold(ASSETS / "gold_en_axes_heldout.tsv")
    assert len(rows) >= 30
    scores = score_axis_gold(rows)
    assert (scores["all"].exact, scores["all"].sentences) == (35, 36)
    assert scores["unchanged"].exact == scores["unchanged"].sentences


def test_people_held_out_set_scores_its_measured_floor():
    rows = read_axis_gold(ASSETS / "gold_en_axes_people_heldout.tsv")
    assert len(rows) >= 60
    scores = score_axis_gold(rows)
    assert (scores["all"].exact, scores["all"].sentences) == (61, 63)  # 96.8 %
    for phenomenon in ("ordinal", "possessive", "predicative", "nominal", "person", "name"):
        assert scores[phenomenon].sentences >= 4
    assert scores["unchanged"].exact == scores["unchanged"].sentences


@pytest.mark.parametrize(
    "name", ["gold_en_axes.tsv", "gold_en_axes_heldout.tsv", "gold_en_axes_people_heldout.tsv"]
)
def test_no_set_has_a_word_changed_that_its_gold_keeps(name):
    rows = read_axis_gold(ASSETS / name)
    assert collateral_words(rows, axis_gold_outputs(rows)) == []


def test_collateral_words_counts_a_kept_word_that_changed():
    rows = read_axis_gold(ASSETS / "gold_en_axes.tsv")[:1]  # "A Muslim woman opened the shop."
    outputs = ["A Jewish girl opened the shop."]
    assert collateral_words(rows, outputs) == ["woman -> girl"]


def test_mapping_notation_and_bad_gold_rows(tmp_path):
    assert parse_mapping("religion", "muslim>jewish jewish>christian") == [1, 1, 0]
    bad = tmp_path / "bad.tsv"
    bad.write_text(
        "phenomenon\taxis\tmapping\tsource\texpected\n"
        "unchanged\trace\tblack>white\tA black man.\tA white man.\n",
        encoding="utf-8",
    )
    with pytest.raises(CdsbiasError, match=r"bad\.tsv:2: an unchanged row must expect its source"):
        read_axis_gold(bad)
