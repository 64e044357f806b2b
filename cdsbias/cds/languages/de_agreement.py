"""German noun phrases: find what agrees with a person noun and re-inflect it.

A noun phrase is ``[preposition] [article word] [adverb|adjective]* noun``, e.g.
*mit dem sehr jungen Arzt*. Its (gender, number, case) slot is the intersection of what
the noun form, the article word and each adjective ending allow (*dem* + *Arzt* -> masculine
dative singular); when several remain, the preposition and the position in the clause
decide (genitive after a noun or *wegen*, dative after *mit*, accusative after *für* or once
the clause has a subject). An empty intersection means the word is not this person noun
here (*die Heide* is the heath, not a heathen) and nothing is changed.

The counterpart then takes the same number and case, the article word the counterpart's
gender (*dem* -> *der*, *einen* -> *eine*, *zum* -> *zur*, *im* -> *in der*), and each
adjective the ending of its declension (weak after *der*-words, mixed after *ein*-words,
strong without an article: *einen jungen Arzt* -> *eine junge Ärztin*). A relative pronoun
right after the phrase (*, der* / *, mit dem* / *, dessen*) follows the new gender.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from cdsbias.cds.engine import Edit
from cdsbias.cds.languages.de_lexicon import (
    ACC_PREPOSITIONS,
    CASES,
    DAT_PREPOSITIONS,
    DEGREE_ADVERBS,
    GEN_PREPOSITIONS,
    NOMINATIVE_PRONOUNS,
    NOT_VERBS,
    PLURAL_VERBS,
    PREPOSITIONS,
    SINGULAR_VERBS,
    TWO_WAY_PREPOSITIONS,
    NounForm,
    adjective_ending,
    word_set,
)
from cdsbias.cds.languages.de_tokens import (
    CONTRACTIONS,
    Slot,
    Tokens,
    article_form,
    parse_article,
)

_ADJECTIVE_ENDINGS = ("en", "em", "er", "es", "e")
# Lower-case words with an adjective ending that are not adjectives.
NOT_ADJECTIVES = word_set(
    """dessen deren denen derer wessen einige alle beide viele wenige andere sowie"""
)
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
# Uninflected adjectives used as adverbs before an inflected adjective ("ein staatlich
# geprüfter Krankenpfleger"): the chain goes on past them.
_ADVERB_SUFFIXES = ("lich", "ig", "isch", "bar", "sam", "haft", "los", "voll")
COORDINATORS = frozenset({"und", "oder", "sowie", "als", "wie"})
# Verbs that take a dative object ("wir helfen den Kollegen" is plural dative).
DATIVE_VERBS = re.compile(
    r"gab|gaben|gibt|gebe|geben|gegeben|half|halfen|hilft|geholfen|gefiel|gefielen|brachte"
    r"|(?:helf|dank|gedankt|gratulier|folg|gefolgt|gehör|vertrau|begegn|antwort|geantwort"
    r"|gefall|zuhör|widm|gewidm|schenk|geschenk|zeig|gezeig|erzähl|bring|schick|geschick)\w*"
)
_DECLENSION = {"def": "weak", "dies": "weak", "ein": "mixed"}
# adjective_ending as one table per declension, for the slot filters of the hot path.
_PHRASE_SLOTS = [(gender, "sg", case) for gender in "mfn" for case in CASES] + [
    ("x", "pl", case) for case in CASES
]
_ENDINGS = {
    declension: {slot: adjective_ending(declension, slot) for slot in _PHRASE_SLOTS}
    for declension in ("weak", "mixed", "strong")
}
# Unions used in the hot paths, built once.
_DAT_OR_GEN = DAT_PREPOSITIONS | GEN_PREPOSITIONS
_OPENERS = PREPOSITIONS | COORDINATORS
_FINITE_VERBS = SINGULAR_VERBS | PLURAL_VERBS
_RELATIVE_PREPOSITIONS = DAT_PREPOSITIONS | ACC_PREPOSITIONS | TWO_WAY_PREPOSITIONS
_RELATIVE = {
    "m": {"nom": "der", "gen": "dessen", "dat": "dem", "acc": "den"},
    "f": {"nom": "die", "gen": "deren", "dat": "der", "acc": "die"},
}


@dataclass
class NounPhrase:
    """A person noun with what agrees with it, and its resolved slot."""

    noun: int
    article: int | None
    adjectives: list[int]
    slot: Slot
    reading: NounForm

    @property
    def start(self) -> int:
        return self.article if self.article is not None else min([*self.adjectives, self.noun])


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


def _preposition(tokens: Tokens, start: int) -> str:
    """The preposition governing a phrase that starts at word ``start`` ('' if none)."""
    if start > 0 and tokens.adjacent(start):
        word = tokens.lower(start - 1)
        if word in PREPOSITIONS:
            return word
    return ""


def analyse_noun_phrase(
    tokens: Tokens,
    i: int,
    reading: NounForm,
    names: dict[str, str],
    *,
    inflected: bool = False,
    target: dict[tuple[str, str], str] | None = None,
) -> NounPhrase | None:
    """The phrase around person noun ``i`` read as ``reading``; None if nothing fits.

    ``inflected``: the noun is a nominalised adjective (*der Vorsitzende*, *ein
    Angestellter*) whose own ending must fit the slot like an adjective's.

    ``target``: the counterpart's forms, when the caller only needs the phrase to
    re-inflect it with them. A bare noun without adjectives changes nothing but itself,
    so when every slot left has the same number and the same counterpart form (*ist
    Stahlarbeiter*: nominative, dative and accusative all *Stahlarbeiterin*), the case is
    not resolved and the first slot stands for all of them: the edits are the same.
    """
    words, gaps, lowers = tokens.words, tokens.gaps, tokens.lowers
    article = None
    adjectives: list[int] = []
    j = i - 1
    while j >= 0 and gaps[j + 1] == "-":
        j -= 1  # "der Kfz-Mechaniker": the phrase starts before the hyphenated compound
    while j >= 0 and gaps[j + 1].isspace():  # word j + 1 is adjacent to word j
        word = words[j]
        if not word.islower():
            # Capitalised as the first word of a sentence ("Der junge Arzt"), or all caps.
            if not (word.isupper() or (tokens.sentence_start(j) and word[1:].islower())):
                break
            word = word.lower()
        parsed = parse_article(word)
        if parsed is not None:
            article = j
            break
        if word in DEGREE_ADVERBS or (
            adjectives and adjectives[-1] == j + 1 and word.endswith(_ADVERB_SUFFIXES)
        ):
            j -= 1
            continue
        if word.endswith(_ADJECTIVE_ENDINGS) and len(word) > 3 and word not in NOT_ADJECTIVES:
            adjectives.append(j)
            j -= 1
            continue
        break
    # Without an article an adjective chain must open its phrase: after a preposition,
    # "und", a copula or the clause start ("mit jungen Ärzten", "ist staatlich geprüfter
    # Krankenpfleger"), or after a noun in a copula's clause ("ist seit Jahren
    # medizinischer Wissenschaftler"); not after another verb ("wir helfen Kollegen").
    if (
        article is None
        and adjectives
        and not tokens.clause_start(j + 1)
        and lowers[j] not in _OPENERS
        and lowers[j] not in COPULAS
        and not (words[j][:1].isupper() and _copula_before(tokens, j, COPULAS))
    ):
        adjectives = []
    slots = reading.phrase_slots
    declension = "strong"
    contracted = False
    if article is not None:
        kind, stem, article_slots = parse_article(lowers[article])  # type: ignore[misc]
        slots = slots & article_slots
        declension = _DECLENSION[kind]
        contracted = kind == "def" and bool(stem)
    if adjectives or inflected:
        endings = _ENDINGS[declension]
        for adjective in [*adjectives, i] if inflected else adjectives:
            word = words[adjective]
            slots = {slot for slot in slots if word.endswith(endings[slot])}
    # The phrase starts at its article, else at its first adverb or adjective ("als
    # staatlich geprüfte Krankenpflegerin" starts at "staatlich").
    start = article if article is not None else (j + 1 if adjectives else i)
    following = lowers[i + 1] if i + 1 < len(words) and gaps[i + 1].isspace() else ""
    if (
        following in _FINITE_VERBS
        and tokens.clause_start(start)
        and any(slot[2] == "nom" for slot in slots)
    ):
        # A clause-initial phrase before the finite verb that can be nominative is its
        # subject, in the verb's number ("Die Feuerleiter ist lang" is no plural of
        # Feuerleiter); "Den Arzt sah sie" is a topicalised object.
        number = "sg" if following in SINGULAR_VERBS else "pl"
        slots = {slot for slot in slots if slot[2] == "nom" and slot[1] == number}
    if not slots:
        return None
    preposition = (
        CONTRACTIONS[lowers[article]][0]  # type: ignore[index]
        if contracted
        else _preposition(tokens, start)
    )
    if article is None and len({slot[1] for slot in slots}) == 2:
        # A bare singular count noun is predicative ("ist Lehrer", "als Kollege"); any
        # other bare form that can be plural is plural ("Lehrer verdienen wenig").
        predicative = _copula_before(tokens, start) or _singular_copula_after(tokens, i)
        slots = {slot for slot in slots if (slot[1] == "sg") == predicative}
    if (
        target is not None
        and start == i
        and len(slots) > 1
        and len({(slot[1], target.get(slot[1:])) for slot in slots}) == 1
    ):
        return NounPhrase(i, article, adjectives, min(slots), reading)
    slot = _choose_slot(tokens, start, i, slots, preposition, names, bare=article is None)
    return NounPhrase(i, article, adjectives, slot, reading)


def _choose_slot(
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


def _copula_before(tokens: Tokens, start: int, copulas: frozenset[str] = PREDICATIVE) -> bool:
    """A copula or "als" earlier in the clause ("ist seit Jahren Lehrer")."""
    j = start - 1
    while j >= 0:
        if tokens.lower(j) in copulas:
            return True
        if tokens.clause_start(j):
            return False
        j -= 1
    return False


def _singular_copula_after(tokens: Tokens, noun: int) -> bool:
    """A singular copula right after a bare noun, or "zu" + copula ("dass er jetzt
    Lehrer ist", "um Lehrer zu werden")."""
    following = tokens.lower(noun + 1) if tokens.adjacent(noun + 1) else ""
    if following == "zu" and tokens.adjacent(noun + 2):
        return tokens.lower(noun + 2) in ("sein", "werden", "bleiben")
    return following in _SINGULAR_COPULAS_AFTER


def _copula_predicate(tokens: Tokens, start: int, noun: int) -> bool:
    """The phrase from ``start`` to ``noun`` is a copula's predicate.

    Either a copula follows the noun ("dass sie eine Ärztin ist", "um eine gute Ärztin
    zu werden", "eine Ärztin geworden"; "sein" only before a clause end or a lower-case
    word, since before a noun it is the possessive), or one precedes it in the clause and
    the clause does not end in another verb's infinitive or participle, which would make
    the copula an auxiliary ("Sie wird die Ärztin morgen besuchen").
    """
    k = noun + 1
    if tokens.lower(k) == "zu" and tokens.adjacent(k):
        k += 1
    if k < len(tokens.words) and tokens.adjacent(k) and tokens.lower(k) in _COPULAS_AFTER:
        if tokens.lower(k) != "sein":
            return True
        return not tokens.adjacent(k + 1) or tokens.words[k + 1].islower()
    if not _copula_before(tokens, start, COPULAS):
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
def _is_dative_verb(word: str) -> bool:
    return DATIVE_VERBS.fullmatch(word) is not None


def _dative_verb_before(tokens: Tokens, start: int) -> bool:
    j = start - 1
    while j >= 0:
        if _is_dative_verb(tokens.lowers[j]):
            return True
        if tokens.clause_start(j):
            return False
        j -= 1
    return False


def declension(tokens: Tokens, phrase: NounPhrase) -> str:
    """weak / mixed / strong: the adjective declension after the phrase's article."""
    if phrase.article is None:
        return "strong"
    return _DECLENSION[parse_article(tokens.lower(phrase.article))[0]]  # type: ignore[index]


def reinflect(
    tokens: Tokens, phrase: NounPhrase, target: dict[tuple[str, str], str], gender: str
) -> tuple[dict[int, Edit], dict[int, Slot]] | None:
    """Edits that give ``phrase`` the noun of ``gender`` (forms ``target``).

    Returns:
        The noun, adjective and (non-possessive) article edits by word index, and for a
        possessive article word the new slot (its stem is the pronoun rules' business).
        None if the counterpart has no form for the slot.
    """
    _, number, case = phrase.slot
    form = target.get((number, case))
    if form is None:
        return None
    new_slot: Slot = (gender if number == "sg" else "x", number, case)
    edits = {phrase.noun: tokens.edit(phrase.noun, form, "noun")}
    if number == "pl":
        return edits, {}
    possessive_slots: dict[int, Slot] = {}
    declension = "strong"
    if phrase.article is not None:
        word = tokens.words[phrase.article]
        kind, stem, _ = parse_article(word.lower())  # type: ignore[misc]
        declension = "mixed" if kind == "ein" else "weak"
        if kind == "ein" and stem in ("sein", "ihr"):
            possessive_slots[phrase.article] = new_slot
        else:
            new = article_form(kind, stem, new_slot, contracted=kind == "def" and bool(stem))
            if new != word.lower():
                edits[phrase.article] = tokens.edit(phrase.article, new, "determiner")
    if not phrase.adjectives:
        return edits, possessive_slots
    endings = _ENDINGS[declension]
    old_ending = endings[phrase.slot]
    new_ending = endings[new_slot]
    if old_ending != new_ending:
        for adjective in phrase.adjectives:
            word = tokens.words[adjective]
            edits[adjective] = tokens.edit(
                adjective, word[: len(word) - len(old_ending)] + new_ending, "adjective"
            )
    return edits, possessive_slots


def relative_edit(
    tokens: Tokens, phrase: NounPhrase, gender: str, names: dict[str, str]
) -> Edit | None:
    """Re-inflects a relative pronoun right after a singular phrase (", der" -> ", die")."""
    if phrase.slot[1] != "sg":
        return None
    j = phrase.noun + 1
    if j >= len(tokens.words) or tokens.gap(j).strip() != ",":
        return None
    preposition = ""
    if tokens.lower(j) in _RELATIVE_PREPOSITIONS:
        preposition = tokens.lower(j)
        j += 1
    word = tokens.lower(j)
    old = phrase.reading.gender
    cases = [case for case, form in _RELATIVE[old].items() if form == word]
    if not cases or j >= len(tokens.words) or not tokens.words[j].islower():
        return None
    after = tokens.words[j + 1] if j + 1 < len(tokens.words) else ""
    apposition = word not in ("dessen", "deren") and after not in names
    if apposition and after[:1].isupper() and tokens.adjacent(j + 1):
        # An apposition's article ("der Arzt, der Lehrer"), not a relative; the genitive
        # relatives stand before their noun ("dessen Sohn").
        return None
    case = cases[0]
    if len(cases) > 1:  # feminine "die": accusative if a subject follows
        follower = tokens.lower(j + 1)
        subject_follows = follower in NOMINATIVE_PRONOUNS or follower in ("sie", "der", "die")
        case = "acc" if preposition in ACC_PREPOSITIONS or subject_follows else "nom"
    if preposition in DAT_PREPOSITIONS:
        case = "dat"
    new = _RELATIVE[gender][case]
    return tokens.edit(j, new, "relative") if new != word else None
