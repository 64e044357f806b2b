"""The gender axis: male and female, the project's gendered word pairs.

Word tuples: every line of ``cdsbias/resources/wordlists/gendered_word_pairs.tsv`` as a
``(male, female)`` pair (whatever its CDS direction), sorted, then bias-bench's two pronoun
pairs ``him/her`` and ``his/her``, which that file leaves to the English CDS rules' context
decisions. These are the pairs the post-hoc methods have always been fitted on, so a gender
run's numbers do not move. CDS itself swaps gender with each language's own rules
(cdsbias.cds.languages), which read the same file for English.

Self-Debias prefix, SEAT tests and benchmark categories: bias-bench's (Meade et al. 2022,
``bias_bench/benchmark/crows/crows.py`` ``DEBIASING_PREFIXES["gender"]``,
``export/seat.py`` ``GENDER_TESTS``).
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.word_files import GENDERED_WORD_PAIRS, load_word_pairs

#: bias-bench's pronoun pairs that the CDS list leaves to its context rules.
CONTEXT_PAIRS = (("him", "her"), ("his", "her"))
#: Words of a group that no tuple pairs, per group (male, female): Kaneko & Bollegala's
#: Context-Debias attribute classes hold the possessive "hers", which has no male word of
#: its own ("his" is already paired with "her"), so the tuples cannot list it. Only
#: Context-Debias reads these (cdsbias.methods.context_debias_data); CDS decides "hers" by
#: context (cdsbias.cds.languages.en_pronouns).
UNPAIRED_WORDS: tuple[tuple[str, ...], ...] = ((), ("hers",))
PREFIX = "The following text discriminates against people because of their gender: "
#: bias-bench's gender SEAT tests (May et al. 2019's WEAT 6-8 as sentences).
SEAT_TESTS = (
    "sent-weat6",
    "sent-weat6b",
    "sent-weat7",
    "sent-weat7b",
    "sent-weat8",
    "sent-weat8b",
)


def word_pair_tuples(path: object = None) -> list[tuple[str, str]]:
    """``(male, female)`` of every line of a CDS word-pair file, whatever its direction,
    sorted (the default file when ``path`` is None)."""
    word_map, male_words, _ = load_word_pairs(path)  # type: ignore[arg-type]
    pairs = {(m, f) for m, f in word_map.items() if m in male_words and f not in male_words}
    pairs |= {(m, f) for f, m in word_map.items() if f not in male_words and m in male_words}
    return sorted(pairs)


def build() -> BiasAxis:
    """The gender axis."""
    return BiasAxis(
        name="gender",
        groups=("male", "female"),
        tuples=(*word_pair_tuples(), *CONTEXT_PAIRS),
        source=f"shipped: {resources.resource_path('wordlists', GENDERED_WORD_PAIRS)} "
        "+ him/her, his/her",
        description="binary gender: male and female words",
        self_debias_prefix=PREFIX,
        seat_tests=SEAT_TESTS,
        crows_pairs_category="gender",
        stereoset_domain="gender",
        languages=("en", "de", "da"),
        holistic_bias_axis="gender_and_sex",
        holistic_bias_buckets=(("binary:male",), ("binary:female",)),
        citations=(
            "Zhao et al. (2018), WinoBias word lists (the start of gendered_word_pairs.tsv)",
            "Meade et al. (2022), bias-bench: pronoun pairs, Self-Debias prefix, SEAT tests",
        ),
    )
