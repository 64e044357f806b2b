"""German text in capitals: swapped like ordinary text and written back in capitals.

The German rules read capitalisation (a capitalised word is a noun, *Sie* mid-sentence is
the formal address), so a sentence in capitals (*DER ARZT GAB IHR SEIN BUCH.*) would give
them nothing to go on. Such a sentence is first given ordinary German casing, a guess from
the words themselves: its first word, person nouns (and compounds of them), given names
and place adjectives (and the noun after one) capitalised, except a person-noun form that
ends like an adjective before a person noun (*EINE JUNGE ÄRZTIN*: the adjective); the
function words the rules know (article words, pronouns, prepositions, conjunctions,
copulas, the listed finite verbs) in lower case; any other word capitalised right after
an article word, a preposition or an adjective unless it ends like an adjective before
another content word (*SEIN BUCH* -> *sein Buch*, *EIN GUTER LEHRER* -> *ein guter
Lehrer*), else in lower case. The rules then run on the re-cased text (same
offsets: casing keeps each word's length, or the sentence is left as it is) and every edit
inside a capitals sentence is written in capitals (*DIE ÄRZTIN GAB IHM IHR BUCH.*).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from cdsbias.cds.engine import Edit
from cdsbias.cds.languages.base import LETTERS, Skip
from cdsbias.cds.languages.de_case import COORDINATORS, COPULAS
from cdsbias.cds.languages.de_lexicon import (
    DEGREE_ADVERBS,
    NOMINATIVE_PRONOUNS,
    NOT_VERBS,
    PLURAL_VERBS,
    PREPOSITIONS,
    SINGULAR_VERBS,
    SUBORDINATORS,
)
from cdsbias.cds.languages.de_places import is_place_adjective
from cdsbias.cds.languages.de_tokens import CONTRACTIONS, parse_article

#: Two words in capitals in a row: the cheap test for a document that may hold a
#: sentence in capitals (one regex search; most documents fail it).
CAPITALS_RUN = re.compile(r"[A-ZÄÖÜ][A-ZÄÖÜẞ]+[ ,;:\-]+[A-ZÄÖÜ][A-ZÄÖÜẞ]+")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]*")
# Nouns of time that often stand before a bare predicate noun ("SEIT ZEHN JAHREN LEHRER"),
# where they would otherwise be read as its adjective.
_TIME_NOUNS = frozenset(
    ("jahren", "jahre", "monaten", "monate", "wochen", "tagen", "stunden", "jahrzehnten")
)
_NON_COPULA_VERBS = (SINGULAR_VERBS | PLURAL_VERBS) - COPULAS
_TITLES = frozenset(("Herr", "Herrn", "Frau", "Dr", "Prof", "Professor", "Professorin"))
_ADJECTIVE_ENDINGS = ("e", "en", "em", "er", "es")
_LOWER_WORDS = (
    PREPOSITIONS
    | SUBORDINATORS
    | COPULAS
    | COORDINATORS
    | SINGULAR_VERBS
    | PLURAL_VERBS
    | NOT_VERBS
    | DEGREE_ADVERBS
    | NOMINATIVE_PRONOUNS
    | frozenset(("sie", "ihn", "ihm", "ihr", "sich", "uns", "euch", "mich", "dich", "mir"))
    | frozenset(("dir", "nicht", "kein", "zu", "dass", "sehr", "auch", "noch", "schon"))
)


def edits_with_capitals(
    text: str,
    rules: Callable[[str, list[Skip] | None], list[Edit]],
    is_name_or_person: Callable[[str], bool],
    names: Mapping[str, str],
    skipped: list[Skip] | None,
) -> list[Edit]:
    """The edits of ``rules`` (the language's rules on a text, with their skips) for
    ``text``, its sentences in capitals read in ordinary casing and their edits written
    in capitals; skips are reported with the original's spelling."""
    spans = capital_spans(text)
    if not spans:
        return rules(text, skipped)
    own: list[Skip] = []
    edits = rules(recased(text, spans, is_name_or_person, names), own)
    if skipped is not None:
        skipped.extend(skip._replace(original=text[skip.start : skip.end]) for skip in own)

    def inside(edit: Edit) -> bool:
        return any(start <= edit.start < end for start, end in spans)

    return [
        Edit(
            edit.start,
            edit.end,
            text[edit.start : edit.end],
            edit.replacement.upper() if inside(edit) else edit.replacement,
            edit.kind,
        )
        for edit in edits
    ]


def capital_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` written in capitals (two or more
    words of two or more letters, no lower-case letter)."""
    spans = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group()
        if any(char.islower() for char in sentence):
            continue
        if sum(len(word) > 1 for word in LETTERS.findall(sentence)) >= 2:
            spans.append(match.span())
    return spans


def recased(
    text: str,
    spans: list[tuple[int, int]],
    is_name_or_person: Callable[[str], bool],
    names: Mapping[str, str],
) -> str:
    """``text`` with each capitals sentence of ``spans`` in ordinary casing (see the
    module docstring); ``is_name_or_person(word)``: a capitalised word names a person;
    ``names``: the given names (never read as adjectives)."""
    pieces = []
    position = 0
    for start, end in spans:
        pieces.append(text[position:start])
        sentence = text[start:end]
        cased = _recase_sentence(sentence, is_name_or_person, names)
        pieces.append(cased if len(cased) == len(sentence) else sentence)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _recase_sentence(
    sentence: str, is_name_or_person: Callable[[str], bool], names: Mapping[str, str]
) -> str:
    matches = list(LETTERS.finditer(sentence))
    lowers = [match.group().lower() for match in matches]
    out = list(sentence)
    previous = ""  # the previous word as re-cased
    for index, (match, lower) in enumerate(zip(matches, lowers, strict=True)):
        capital = lower[:1].upper() + lower[1:]
        following = lowers[index + 1] if index + 1 < len(lowers) else ""
        if index == 0 or is_place_adjective(capital) or lower in _TIME_NOUNS:
            word = capital
        elif previous in _TITLES:
            word = capital  # "HERR WAGNER": the surname after a title
        elif is_name_or_person(capital):
            # A person-noun form that ends like an adjective is the adjective before a
            # person noun ("EINE JUNGE ÄRZTIN"), or right after a finite verb other than a
            # copula before another content word ("LAG DICHTER NEBEL").
            next_capital = following[:1].upper() + following[1:]
            adjective = lower.endswith(_ADJECTIVE_ENDINGS) and (
                is_name_or_person(next_capital)
                or (capital not in names and _content(following) and previous in _NON_COPULA_VERBS)
            )
            word = lower if adjective else capital
        elif lower in _LOWER_WORDS or parse_article(lower) is not None:
            word = lower
        elif lower.endswith(("te", "ten")) and _clause_final(sentence, matches, index):
            word = lower  # "ALS MAN IHR APPLAUDIERTE": a past-tense verb closing its clause
        elif _opens_noun(previous, lower):
            # After an article word, a preposition or an adjective: an adjective if it
            # ends like one before another content word, else the noun.
            adjective = (
                not is_place_adjective(previous)  # "FRANKFURTER BÖRSE": its noun
                and lower.endswith(_ADJECTIVE_ENDINGS)
                and _content(following)
            )
            word = lower if adjective else capital
        else:
            word = lower
        out[match.start() : match.end()] = word
        previous = word
    return "".join(out)


def _content(word: str) -> bool:
    """``word`` (lower case) is there and is no function word the rules know."""
    return bool(word) and word not in _LOWER_WORDS and parse_article(word) is None


def _clause_final(sentence: str, matches: list, index: int) -> bool:
    """Word ``index`` of ``sentence`` is the last of its clause."""
    if index + 1 >= len(matches):
        return True
    gap = sentence[matches[index].end() : matches[index + 1].start()]
    return any(char in ",;:()" for char in gap)


def _opens_noun(previous: str, word: str) -> bool:
    """A noun may follow ``previous`` (as re-cased) as ``word`` (lower case): after an
    article word, a preposition, a contraction, an adjective (a lower-case word ending
    like one) or a place adjective."""
    if is_place_adjective(previous):
        # "BERLINER SENAT": the noun after a place adjective, but not a participle
        # ("MIT DEM HANAUER GESPROCHEN": the demonym).
        return not (word.startswith("ge") and word.endswith(("t", "en")))
    if not previous or not (previous.islower() or parse_article(previous.lower())):
        return False  # a noun; but the sentence's first word may be an article: "DER ARZT"
    previous = previous.lower()
    return (
        parse_article(previous) is not None
        or previous in PREPOSITIONS
        or previous in CONTRACTIONS
        or (previous.endswith(_ADJECTIVE_ENDINGS) and previous not in _LOWER_WORDS)
    )
