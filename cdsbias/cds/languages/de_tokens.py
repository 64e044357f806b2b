"""German text as words with offsets, and the article words (der, dies-, ein-, zum, ...).

:class:`Tokens` keeps each word's offsets and answers what lies between two words
(adjacent, clause or sentence start); :func:`parse_article` reads an article word into its
kind, stem and the (gender, number, case) slots it can express, :func:`article_form`
writes one for a slot (re-fusing contractions: *zu der* -> *zur*).
"""

from __future__ import annotations

import bisect
import functools
import re

from cdsbias.cds.engine import Edit, match_case
from cdsbias.cds.languages.de_lexicon import (
    DEF_FORM,
    DEFINITE,
    DIES_ENDINGS,
    DIES_FORM,
    DIES_STEMS,
    EIN_ENDINGS,
    EIN_FORM,
    EIN_STEMS,
)

Slot = tuple[str, str, str]  # (gender m/f/n or x for plural, number, case)
# Preposition + article contractions: (preposition, article).
CONTRACTIONS = {
    "zum": ("zu", "dem"),
    "zur": ("zu", "der"),
    "im": ("in", "dem"),
    "am": ("an", "dem"),
    "vom": ("von", "dem"),
    "beim": ("bei", "dem"),
    "ins": ("in", "das"),
    "ans": ("an", "das"),
}
_FUSED = {(prep, article): fused for fused, (prep, article) in CONTRACTIONS.items()}
_CLAUSE_CHARS = ',;.!?:()"„“”\n–'
_SENTENCE_CHARS = ".!?:\n"
_CLAUSE_BREAK = re.compile(f"[{re.escape(_CLAUSE_CHARS)}]")
_SENTENCE_BREAK = re.compile(f"[{re.escape(_SENTENCE_CHARS)}]")


class Tokens:
    """The words of a text with their offsets and the text between them."""

    __slots__ = ("ends", "lowers", "starts", "text", "words")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.text = text
        matches = list(pattern.finditer(text))
        self.starts = [match.start() for match in matches]
        self.ends = [match.end() for match in matches]
        self.words = [match.group() for match in matches]
        self.lowers = [word.lower() for word in self.words]

    def gap(self, i: int) -> str:
        """The text between word ``i - 1`` and word ``i``."""
        return self.text[self.ends[i - 1] if i else 0 : self.starts[i]]

    def adjacent(self, i: int) -> bool:
        """Word ``i`` follows word ``i - 1`` with only spaces between."""
        if i <= 0:
            return False
        end = self.ends[i - 1]
        if self.starts[i] - end == 1:  # the common case: one character between
            return self.text[end].isspace()
        return self.gap(i).isspace()

    def sentence_start(self, i: int) -> bool:
        if i <= 0:
            return True
        end = self.ends[i - 1]
        if self.starts[i] - end == 1:
            return self.text[end] in _SENTENCE_CHARS
        return bool(_SENTENCE_BREAK.search(self.gap(i)))

    def clause_start(self, i: int) -> bool:
        if i <= 0:
            return True
        end = self.ends[i - 1]
        if self.starts[i] - end == 1:
            return self.text[end] in _CLAUSE_CHARS
        return bool(_CLAUSE_BREAK.search(self.gap(i)))

    def lower(self, i: int) -> str:
        return self.lowers[i] if 0 <= i < len(self.lowers) else ""

    def index(self, start: int) -> int:
        """The word that starts at offset ``start``."""
        return bisect.bisect_left(self.starts, start)

    def edit(self, i: int, replacement: str, kind: str) -> Edit:
        word = self.words[i]
        return Edit(self.starts[i], self.ends[i], word, match_case(word, replacement), kind)


@functools.lru_cache(maxsize=1 << 16)
def parse_article(word: str) -> tuple[str, str, frozenset] | None:
    """(kind, stem, slots) of an article word (lower case), or None."""
    parsed = None
    if word in DEFINITE:
        parsed = ("def", "", frozenset(DEFINITE[word]))
    elif word in CONTRACTIONS:
        parsed = ("def", CONTRACTIONS[word][0], frozenset(DEFINITE[CONTRACTIONS[word][1]]))
    else:
        for stem in DIES_STEMS:
            if word.startswith(stem) and word[len(stem) :] in DIES_ENDINGS:
                parsed = ("dies", stem, frozenset(DIES_ENDINGS[word[len(stem) :]]))
        for stem in EIN_STEMS:
            if word.startswith(stem) and word[len(stem) :] in EIN_ENDINGS:
                parsed = ("ein", stem, frozenset(EIN_ENDINGS[word[len(stem) :]]))
    return parsed


def article_form(kind: str, stem: str, slot: Slot, *, contracted: bool = False) -> str:
    """The article word of ``kind``/``stem`` for ``slot`` (contractions re-fused)."""
    if kind == "def":
        article = DEF_FORM[slot]
        if not contracted:
            return article
        return _FUSED.get((stem, article), f"{stem} {article}")
    return stem + (DIES_FORM if kind == "dies" else EIN_FORM)[slot]
