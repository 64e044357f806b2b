"""German place adjectives (*der Berliner Senat*) are never read as person nouns.

Words that only look like person nouns: the invariant -er adjective of a city, region or
country (cdsbias.cds.languages.de_places). Nothing may change in text about a place, and
every refusal is reported as a ``place adjective`` skip.
"""

from __future__ import annotations

import pytest

from cdsbias.cds.engine import apply_edits
from cdsbias.cds.languages.base import Skip
from cdsbias.cds.languages.de import German
from cdsbias.cds.languages.de_places import PLACE_SKIP, is_place_adjective, place_adjectives
from cdsbias.cds.report import SubstitutionReport


@pytest.fixture(scope="module")
def german() -> German:
    return German()


@pytest.mark.parametrize(
    ("text", "skips"),
    [
        ("Der Berliner Senat tagte gestern.", 1),  # city, attributive, nominative
        ("Die Frankfurter Börse schloss fester.", 1),
        ("Wir aßen Wiener Würstchen und Schweizer Käse.", 2),  # country, without article
        ("Im Münchner Westen wird gebaut.", 1),  # after a contraction
        ("Die Preise des Stuttgarter Flughafens stiegen.", 1),  # genitive
        ("Wir wandern im Thüringer Wald.", 1),  # region
        ("Der Ostberliner Bahnhof war leer.", 1),  # a compound the list lacks
        ("Der Käse ist Schweizer.", 1),  # predicative, about a thing
        ("Das Bier im Keller war Münchner.", 1),
    ],
)
def test_place_adjectives_change_nothing_and_are_counted(german, text, skips):
    skipped: list[Skip] = []
    assert german.edits(text, skipped=skipped) == []
    assert [skip.reason for skip in skipped] == [PLACE_SKIP] * skips
    for skip in skipped:
        assert text[skip.start : skip.end] == skip.original
        assert is_place_adjective(skip.original)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The adjective stays while the person noun after it swaps, with its agreement.
        ("Der Berliner Arzt, der dort wohnt, kam.", "Die Berliner Ärztin, die dort wohnt, kam."),
        (
            "Wir sprachen mit dem Kölner Bürgermeister.",
            "Wir sprachen mit der Kölner Bürgermeisterin.",
        ),
        # The demonym about a person is a person noun.
        ("Er ist Wiener.", "Sie ist Wienerin."),
        ("Meine Mutter ist Hamburgerin.", "Mein Vater ist Hamburger."),
        ("Die Berliner sind stolz.", "Die Berlinerinnen sind stolz."),
        # A person noun before a name (an apposition) is no place adjective.
        ("Der Lehrer Peter kam.", "Die Lehrerin Maria kam."),
    ],
)
def test_person_nouns_beside_place_adjectives_still_swap(german, text, expected):
    assert apply_edits(text, german.edits(text)) == expected


def test_the_list_and_the_report_count(german):
    places = place_adjectives()
    assert len(places) == 131 and {"Berliner", "Münchner", "Münchener", "Schweizer"} <= places
    assert all(word.endswith("er") and word[0].isupper() for word in places)
    report = SubstitutionReport()
    text = "Die Frankfurter Börse und der Berliner Senat."
    skipped: list[Skip] = []
    edits = german.edits(text, skipped=skipped)
    report.add("doc", text, edits, substituted=True, language=german, skipped=skipped)
    assert report.skipped == {PLACE_SKIP: 2}
