"""The substitution engine's public names: the edits and the English rules.

``CounterfactualSubstituter`` is the English language (cdsbias.cds.languages.en.English),
the default everywhere; other languages come from cdsbias.cds.languages.get_language.
The edit primitives live in cdsbias.cds.edits, the English rules in
cdsbias.cds.languages.en (words and pronouns) and en_names (given names).
"""

from __future__ import annotations

from cdsbias.cds.edits import Edit, apply_edits, map_offset, match_case
from cdsbias.cds.languages.en import (
    ABBREVIATIONS,
    TITLE_MAP,
    WORD_PATTERN,
    Analysis,
    Analyzer,
    English,
)
from cdsbias.cds.languages.en_names import (
    GIVEN_NAME_TITLES,
    PLACE_HEADS,
    PLACE_PREFIXES,
    SENTENCE_STARTERS,
    SURNAME_TITLES,
)

#: The English engine, under the name the CDS API has always used.
CounterfactualSubstituter = English

__all__ = [
    "ABBREVIATIONS",
    "GIVEN_NAME_TITLES",
    "PLACE_HEADS",
    "PLACE_PREFIXES",
    "SENTENCE_STARTERS",
    "SURNAME_TITLES",
    "TITLE_MAP",
    "WORD_PATTERN",
    "Analysis",
    "Analyzer",
    "CounterfactualSubstituter",
    "Edit",
    "English",
    "apply_edits",
    "map_offset",
    "match_case",
]
