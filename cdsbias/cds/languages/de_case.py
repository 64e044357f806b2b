"""German case choice: which slot a noun phrase fills when its forms allow several.

:func:`choose_slot` reads the clause around a phrase whose article, adjectives and noun
leave more than one (gender, number, case) slot (feminine *die* nominative or accusative,
*der* genitive or dative): the governing preposition (genitive after *wegen*, dative after
*mit*, accusative after *für*), a dative verb in the clause (*helfen, geben, ...*), a noun
right before it (genitive: *das Auto des Arztes*), a subject earlier in the clause
(accusative), else nominative; and a copula's predicate is nominative whatever subject
precedes it (*Sie ist eine erfahrene Elektrikerin*: the predicate nominative after *sein,
werden, bleiben, heißen*).
"""

from __future__ import annotations

import functools
import re

from cdsbias.cds.languages.de_lexicon import (
    ACC_PREPOSITIONS,
    DAT_PREPOSITIONS,
    GEN_PREPOSITIONS,
    NOMINATIVE_PRONOUNS,
    NOT_VERBS,
    TWO_WAY_PREPOSITIONS,
    word_set,
)
from cdsbias.cds.languages.de_tokens import Slot, Tokens, parse_article

# Words before a bare noun that make it a (singular) predicate: "ist Lehrer", "als Kollege".
PREDICATIVE = word_set("ist war wird wurde bin bist sei wäre als bleibt blieb")
# Every form of the copulas sein, werden, bleiben, heißen: their predicate noun is
# nominative ("Sie ist eine erfahrene Ärztin", not the accusative a subject before it
# would suggest). "sein" is left out before a phrase (there it is the possessive);
# "worden" is the passive auxiliary, not a copula.
COPULAS = word_set(
    """bin bist ist sind seid war warst waren wart sei seist seiest seien wäre wärst wären
    wärt gewesen werde wirst wird werden werdet wurde wurdest wurden wurdet würde würdest
    würden würdet geworden bleibe bleibst bleibt bleiben bleibet blieb bliebst blieben
    bliebt bliebe geblieben heiße heißt heißen hieß hießest hießen hießt hieße geheißen"""
)
# Copulas after a bare noun that make it a singular predicate ("dass er jetzt Lehrer ist",
# "will Lehrer werden": a plural subject is the rarer reading there).
_SINGULAR_COPULAS_AFTER = word_set("ist war wird wurde sei wäre bleibt blieb werden sein bleiben")
_COPULAS_AFTER = COPULAS | {"sein"}
COORDINATORS = frozenset({"und", "oder", "sowie", "als", "wie"})
# Verbs that take a dative object ("wir helfen den Kollegen" is plural dative).
DATIVE_VERBS = re.compile(
    r"gab|gaben|gibt|gebe|geben|gegeben|half|halfen|hilft|geholfen|gefiel|gefielen|brachte"
    r"|(?:helf|dank|gedankt|gratulier|folg|gefolgt|gehör|vertrau|begegn|antwort|geantwort"
    r"|gefall|zuhör|widm|gewidm|schenk|geschenk|zeig|gezeig|erzähl|bring|schick|geschick)\w*"
)
_DAT_OR_GEN = DAT_PREPOSITIONS | GEN_PREPOSITIONS


def has_subject_before(tokens: Tokens, i: int, names: dict[str, str]) -> bool:
    """Whether the clause before word ``i`` already has a nominative subject."""
    if tokens.clause_start(i):
        return False
    j = i - 1
    while j >= 0:
        word = tokens.words[j]
        lower = word.lower()
        if lower in NOMINATIVE_PRONOUNS or (lower == "sie" and j != i) or word in names:
            return True
        parsed = parse_article(lower)
        if parsed and any(slot[2] == "nom" for slot in parsed[2]) and lower != "der":
            return True
        if lower == "der" and tokens.lower(j - 1) not in _DAT_OR_GEN:
            return True
        if tokens.clause_start(j):
            return False
        j -= 1
    return False


def choose_slot(
    tokens: Tokens,
    start: int,
    noun: int,
    slots: set[Slot],
    preposition: str,
    names: dict[str, str],
    *,
    bare: bool,
) -> Slot:
    """Picks one slot when the forms leave several, from the preposition and the clause."""
    if len(slots) == 1:
        return next(iter(slots))

    singular_first = sorted(slots, key=lambda slot: slot[1] == "pl")

    def pick(*cases: str) -> Slot | None:
        for case in cases:
            for slot in singular_first:
                if slot[2] == case:
                    return slot
        return None

    if preposition == "um" and tokens.lower(noun + 1) == "zu":
        preposition = ""  # "um Ärztin zu werden": the conjunction um ... zu
    if preposition in GEN_PREPOSITIONS:
        chosen = pick("gen", "dat")
    elif preposition in DAT_PREPOSITIONS:
        # "mit den Kollegen": after a dative preposition "den" is plural.
        chosen = pick("dat")
        plural = [slot for slot in slots if slot[2] == "dat" and slot[1] == "pl"]
        if plural and not any(s[2] == "dat" and s[1] == "sg" for s in slots):
            chosen = plural[0]
    elif preposition in ACC_PREPOSITIONS:
        chosen = pick("acc")
    elif preposition in TWO_WAY_PREPOSITIONS:
        chosen = pick("dat", "acc")
    else:
        previous = tokens.words[start - 1] if start > 0 else ""
        after_noun = (
            start > 0
            and previous[:1].isupper()
            and tokens.adjacent(start)
            and previous not in names
        )
        subject_start = start
        if tokens.lower(start - 1) in COORDINATORS and start > 1 and tokens.adjacent(start - 1):
            # "der König und seine Tochter": the second conjunct has the first one's case.
            subject_start = _phrase_start(tokens, start - 2)
        if _dative_verb_before(tokens, start):
            chosen = pick("dat", "acc", "nom", "gen")
        elif after_noun and not bare:
            # "das Auto des Arztes"; a bare noun after a noun is no genitive ("seit zehn
            # Jahren Lehrerin").
            chosen = pick("gen", "dat", "nom", "acc")
        elif has_subject_before(tokens, subject_start, names):
            chosen = pick("acc", "dat", "nom", "gen")
        else:
            chosen = pick("nom", "dat", "acc", "gen")
        if (
            chosen is not None
            and chosen[2] != "nom"
            and any(slot[2] == "nom" for slot in slots)
            and (
                (tokens.lower(start - 1) == "als" and tokens.adjacent(start))
                or _copula_predicate(tokens, start, noun)
            )
        ):
            # "Sie ist eine erfahrene Elektrikerin": a predicate noun is nominative,
            # whatever subject stands before it; so is a bare "als" phrase, which mostly
            # describes the subject ("Sie arbeitet als staatlich geprüfte Krankenpflegerin").
            # (Tested last: it only matters where the clause would not give nominative.)
            chosen = pick("nom")
    return chosen or sorted(slots)[0]


def _phrase_start(tokens: Tokens, j: int) -> int:
    """The first word of the phrase ending at word ``j`` (its article, if near)."""
    for k in range(j, max(-1, j - 4), -1):
        if parse_article(tokens.lower(k)) is not None:
            return k
        if not tokens.adjacent(k):
            break
    return j


def copula_before(tokens: Tokens, start: int, copulas: frozenset[str] = PREDICATIVE) -> bool:
    """A copula or "als" earlier in the clause ("ist seit Jahren Lehrer")."""
    j = start - 1
    while j >= 0:
        if tokens.lower(j) in copulas:
            return True
        if tokens.clause_start(j):
            return False
        j -= 1
    return False


def _copula_after(tokens: Tokens, noun: int) -> int | None:
    """The copula that follows a noun in its clause, past a complement of up to five
    words ("Mechaniker für mobile Geräte ist", "Leiterin religiöser Aktivitäten zu
    werden"); ``zu`` is skipped. None if a clause end or another verb comes first."""
    for k in range(noun + 1, min(noun + 7, len(tokens.words))):
        if not tokens.adjacent(k):
            return None
        word = tokens.lowers[k]
        if word == "zu":
            continue
        if word in _COPULAS_AFTER:
            return k
        if tokens.words[k].islower() and word.endswith(("t", "en")) and word not in NOT_VERBS:
            following = tokens.words[k + 1] if k + 1 < len(tokens.words) else ""
            if not (word.endswith("en") and following[:1].isupper() and tokens.adjacent(k + 1)):
                return None  # a verb ("gesucht werden"), not an adjective ("kleinen Kindern")
    return None


def singular_copula_after(tokens: Tokens, noun: int) -> bool:
    """A singular copula, or "zu" + copula, after a bare noun ("dass er jetzt Lehrer
    ist", "um Lehrer zu werden", "dass er Mechaniker für mobile Geräte ist")."""
    k = _copula_after(tokens, noun)
    return k is not None and tokens.lowers[k] in _SINGULAR_COPULAS_AFTER


def _copula_predicate(tokens: Tokens, start: int, noun: int) -> bool:
    """The phrase from ``start`` to ``noun`` is a copula's predicate.

    Either a copula follows the noun, past a short complement ("dass sie eine Ärztin
    ist", "um eine gute Ärztin zu werden", "eine Ärztin geworden"; "sein" only before a
    clause end or a lower-case word, since before a noun it is the possessive), or one
    precedes it in the clause and the clause does not end in another verb's infinitive or
    participle, which would make the copula an auxiliary ("Sie wird die Ärztin morgen
    besuchen").
    """
    k = _copula_after(tokens, noun)
    if k is not None:
        if tokens.lower(k) != "sein":
            return True
        return not tokens.adjacent(k + 1) or tokens.words[k + 1].islower()
    if not copula_before(tokens, start, COPULAS):
        return False
    last = noun
    while last + 1 < len(tokens.words) and not tokens.clause_start(last + 1):
        if tokens.lower(last + 1) in COORDINATORS:
            break
        last += 1
    final = tokens.words[last]
    if last == noun or not final.islower() or final in COPULAS or final in NOT_VERBS:
        return True
    return not (final.endswith("en") or (final.startswith("ge") and final.endswith("t")))


@functools.lru_cache(maxsize=1 << 16)
def is_dative_verb(word: str) -> bool:
    return DATIVE_VERBS.fullmatch(word) is not None


def _dative_verb_before(tokens: Tokens, start: int) -> bool:
    j = start - 1
    while j >= 0:
        if is_dative_verb(tokens.lowers[j]):
            return True
        if tokens.clause_start(j):
            return False
        j -= 1
    return False
