"""The interface every counterfactual-substitution language implements.

A language turns a text into character-level edits (:class:`cdsbias.cds.engine.Edit`):
sorted by position, non-overlapping, offsets into the *original* text, replacements in
the original's casing. Everything downstream (GAP offsets, reports, corpora, training)
works on edits and never needs to know the language.

Each language lives in its own module beside this one (``en.py``, ``de.py``, ``da.py``)
with its word lists as data files under ``cdsbias/resources/``; a fourth language is one
more module and its data.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, NamedTuple

from cdsbias.cds.engine import Edit


class Skip(NamedTuple):
    """A gendered-looking unit the language deliberately left unchanged.

    Attributes:
        start: Start offset in the original text.
        end: End offset (exclusive).
        original: ``text[start:end]``.
        reason: Why, e.g. ``"ambiguous sie"`` — counted per reason in the report.
    """

    start: int
    end: int
    original: str
    reason: str


class Language(ABC):
    """Gender-counterfactual rules for one language.

    Args:
        names: Whether first names are swapped.
    """

    #: ISO 639-1 code, the value of ``cds_language`` / ``cdsbias cds --language``.
    code: ClassVar[str]
    #: English name of the language, for messages and reports.
    name: ClassVar[str]

    def __init__(self, *, names: bool = True) -> None:
        self.names = names

    @abstractmethod
    def edits(self, text: str, *, skipped: list[Skip] | None = None) -> list[Edit]:
        """The substitutions that make ``text`` its gender counterfactual.

        Args:
            text: One document.
            skipped: If given, the language appends a :class:`Skip` for every unit it
                recognised but left alone because it could not resolve it.
        """

    @property
    @abstractmethod
    def known_words(self) -> frozenset[str]:
        """Every lower-cased word form the language swaps (both sides, names included)."""
