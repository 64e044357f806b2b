"""What an optional linguistic analyser (spaCy) tells the English rules: decisions that
override the rule-based ones, and the protocol an analyser implements."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class Analysis:
    """Decisions a part-of-speech tagger / NER made for one text, keyed by start offset.

    Attributes:
        possessive: For each ``her``/``his`` token start, True if it is a possessive
            determiner (her -> his, his -> her), False if object / independent (-> him / hers).
        given_names: Starts of tokens tagged as the given-name part of a PERSON entity, or
            None when the analyser does no NER (then the rules decide).
        surnames: Starts of tokens tagged as a later part of a PERSON entity.
    """

    possessive: dict[int, bool] = field(default_factory=dict)
    given_names: set[int] | None = None
    surnames: set[int] = field(default_factory=set)


class Analyzer(Protocol):
    """Optional linguistic analysis (e.g. spaCy) that overrides the rule-based decisions."""

    name: str

    def analyze_many(self, texts: Iterable[str]) -> list[Analysis]:
        """Analyses several texts (batched for speed)."""
        ...
