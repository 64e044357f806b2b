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
from itertools import accumulate, chain

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
    """The words of a text with their offsets and the text between them.

    Built from ``re.split`` with the word pattern as a capturing group, which returns the
    gaps and the words alternately in one pass over the text (``parts``); the offsets are
    running sums of their lengths, so no Python code runs per match.
    """

    __slots__ = ("ends", "gaps", "lowers", "memo", "starts", "text", "words")

    def __init__(self, text: str, parts: list[str]) -> None:
        self.text = text
        self.words = parts[1::2]
        self.gaps = parts[0::2]  # gaps[i]: the text before word i (and one after the last)
        offsets = list(
            accumulate(chain.from_iterable(zip(map(len, self.gaps), map(len, self.words))))
        )
        self.starts = offsets[0::2]
        self.ends = offsets[1::2]
        self.lowers = list(map(str.lower, self.words))
        #: Per-document memo of the language's rules (e.g. which words head a non-person
        #: noun phrase), keyed by the rule's name and word index.
        self.memo: dict = {}

    def gap(self, i: int) -> str:
        """The text between word ``i - 1`` and word ``i``."""
        return self.gaps[i]

    def adjacent(self, i: int) -> bool:
        """Word ``i`` follows word ``i - 1`` with only spaces between."""
        return i > 0 and self.gaps[i].isspace()

    def sentence_start(self, i: int) -> bool:
        if i <= 0:
            return True
        gap = self.gaps[i]
        if len(gap) == 1:  # the common case: one character between
            return gap in _SENTENCE_CHARS
        return bool(_SENTENCE_BREAK.search(gap))

    def clause_start(self, i: int) -> bool:
        if i <= 0:
            return True
        gap = self.gaps[i]
        if len(gap) == 1:
            return gap in _CLAUSE_CHARS
        return bool(_CLAUSE_BREAK.search(gap))

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
