"""Neutral rewriting of informal text (issue 36; cdsbias.cds.languages.en_informal and the
agreement rules of en_agreement): *his* before a noun, *her* before a non-noun, agreement at
a distance, pronouns inside hyphenated words; the development and held-out gold sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdsbias.cds.gold import read_gold, rewrite_figures
from cdsbias.cds.languages.en_neutral import EnglishNeutral

ASSETS = Path(__file__).parent / "assets" / "cds"
NEUTRAL = EnglishNeutral()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # his before a noun: quoted, capitalised, a degree word that is the noun.
        ("He hid it behind his back.", "They hid it behind their back."),
        ("you were his 'plan B' all along", "you were their 'plan B' all along"),
        ("He sang his most “famous” song.", "They sang their most “famous” song."),
        ("he forgot his Keys", "they forgot their Keys"),
        ("He gave it his all for years.", "They gave it their all for years."),
        ("He was at his worst.", "They were at their worst."),
        # ... and where it stands alone, or in a title, it stays "theirs".
        ("The win was his.", "The win was theirs."),
        ("Is the coat his or mine?", "Is the coat theirs or mine?"),
        ("The Choice Is His To Make", "The Choice Is Theirs To Make"),
        ("He stood at his back door.", "They stood at their back door."),
        # her before a non-noun: an object.
        ("I owe her #grateful", "I owe them #grateful"),
        ("I adore her… truly", "I adore them… truly"),
        ("we love her 💖", "we love them 💖"),
        ("called her lmao", "called them lmao"),
        ("hold her close", "hold them close"),
        ("I'll meet her saturday", "I'll meet them saturday"),
        ("Let her keep it.", "Let them keep it."),
        ("told her NOTHING at all", "told them NOTHING at all"),
        # ... and a possessive where a noun follows.
        ("her #1 fan", "their #1 fan"),
        ("her close friend left", "their close friend left"),
        ("her Saturday class", "their Saturday class"),
        ("her best-selling album", "their best-selling album"),
        ("She did her best to help.", "They did their best to help."),
        ("I read her 'memoir' twice", "I read their 'memoir' twice"),
        ("they named her 'boss'", "they named them 'boss'"),
        ("her NEW car", "their NEW car"),
    ],
)
def test_his_and_her_in_informal_text(source, expected):
    assert NEUTRAL.substitute(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("He politely waves and walks off.", "They politely wave and walk off."),
        ("She tidies it and heads out.", "They tidy it and head out."),
        ("She hoped to win but was beaten.", "They hoped to win but were beaten."),
        ("Nor does he mind.", "Nor do they mind."),
        ("Not only does she paint, she sculpts.", "Not only do they paint, they sculpt."),
        ("He is late and so is she.", "They are late and so are they."),
        (
            "She wakes up, feeds the cat and leaves for work.",
            "They wake up, feed the cat and leave for work.",
        ),
        # Left alone: a subject of its own, a name, a clause the comma ends, "it" as a subject.
        ("It never is he.", "It never is they."),
        ("She likes Paris, Hermes and Texas.", "They like Paris, Hermes and Texas."),
        ("After he left, opens the door.", "After they left, opens the door."),
        ("She thinks it looks good and works.", "They think it looks good and works."),
        (
            "She smokes it, her father arrives and takes it.",
            "They smoke it, their father arrives and takes it.",
        ),
        ("She wanted the cats and dogs to play.", "They wanted the cats and dogs to play."),
    ],
)
def test_agreement_at_a_distance(source, expected):
    assert NEUTRAL.substitute(source) == expected


def test_pronoun_in_a_hyphenated_word_is_kept_and_counted():
    skipped: list = []
    text = "The Snick-snack-her dance and a she-wolf, she said."
    edits = NEUTRAL.edits(text, skipped=skipped)
    assert [edit.original for edit in edits] == ["she"]
    assert [(skip.original, skip.reason) for skip in skipped] == [
        ("her", "pronoun in a hyphenated word kept"),
        ("she", "pronoun in a hyphenated word kept"),
    ]


def test_development_set_is_exact():
    figures = rewrite_figures(NEUTRAL, read_gold(ASSETS / "gold_en_neutral_informal.tsv"))
    assert figures["exact"] == figures["sentences"] == 48
    assert figures["unchanged_changed"] == 0


def test_held_out_set_meets_the_issue_gate():
    """Written before the fixes (commit df879e4): 28/73 exact before them, 70/73 at the
    first run after them (docs/cds.md)."""
    figures = rewrite_figures(NEUTRAL, read_gold(ASSETS / "gold_en_neutral_informal_heldout.tsv"))
    assert figures["sentences"] == 73
    assert figures["exact_rate"] >= 0.95
    assert figures["wer"] <= 0.005
    assert figures["unchanged_changed"] == 0
