"""Sentences of a document: the rule-based splitter shared by the training corpus (one
example per sentence) and the selection of fit sentences for post-hoc debiasing."""

from __future__ import annotations

import re

# Abbreviations after which a full stop does not end a sentence (Wikipedia prose).
_ABBREVIATIONS = [
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Prof",
    "St",
    "Jr",
    "Sr",
    "Mt",
    "Gen",
    "Col",
    "Lt",
    "Sgt",
    "Capt",
    "Rev",
    "Hon",
    "Gov",
    "Sen",
    "Rep",
    "Pres",
    "No",
    "Vol",
    "Inc",
    "Ltd",
    "Co",
    "Corp",
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Sept",
    "Oct",
    "Nov",
    "Dec",
    "vs",
    "etc",
    "al",
    "e.g",
    "i.e",
    "U.S",
    "U.K",
]
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Splits prose into sentences at ``.!?`` followed by space and a capital or digit.

    A rule-based splitter (no model download, unlike NLTK's punkt): it does not split
    after common abbreviations ("Dr. Smith", "U.S. Army") or single initials ("J. Smith").
    """
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].rstrip("\"')]")
        last_word = before.rsplit(None, 1)[-1] if before.split() else ""
        stem = last_word.rstrip(".!?")
        if stem in _ABBREVIATIONS or (len(stem) == 1 and stem.isupper()):
            continue
        sentence = text[start : match.end()].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences
