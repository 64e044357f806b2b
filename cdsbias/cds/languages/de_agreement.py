"""German noun phrases: find what agrees with a person noun and re-inflect it.

A noun phrase is ``[preposition] [article word] [adverb|adjective]* noun``, e.g.
*mit dem sehr jungen Arzt*. Its (gender, number, case) slot is the intersection of what
the noun form, the article word and each adjective ending allow (*dem* + *Arzt* -> masculine
dative singular); when several remain, the preposition and the clause decide
(:mod:`~cdsbias.cds.languages.de_case`: genitive after a noun or *wegen*, dative after
*mit*, accusative after *für* or once the clause has a subject, nominative after a
copula). An empty intersection means the word is not this person noun here (*die Heide*
is the heath, not a heathen) and nothing is changed.

The counterpart then takes the same number and case, the article word the counterpart's
gender (*dem* -> *der*, *einen* -> *eine*, *zum* -> *zur*, *im* -> *in der*), and each
adjective the ending of its declension (weak after *der*-words, mixed after *ein*-words,
strong without an article: *einen jungen Arzt* -> *eine junge Ärztin*). A relative pronoun
right after the phrase (*, der* / *, mit dem* / *, dessen*) follows the new gender.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdsbias.cds.engine import Edit
from cdsbias.cds.languages.de_case import (
    COORDINATORS,
    COPULAS,
    choose_slot,
    copula_before,
    is_dative_verb,
    singular_copula_after,
)
from cdsbias.cds.languages.de_lexicon import (
    ACC_PREPOSITIONS,
    CASES,
    DAT_PREPOSITIONS,
    DEGREE_ADVERBS,
    GENDERED_ADJECTIVE_FORMS,
    GENDERED_ADJECTIVES,
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
from cdsbias.cds.languages.de_places import is_place_adjective
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
# Uninflected adjectives used as adverbs before an inflected adjective ("ein staatlich
# geprüfter Krankenpfleger"): the chain goes on past them.
_ADVERB_SUFFIXES = ("lich", "ig", "isch", "bar", "sam", "haft", "los", "voll")
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
_OPENERS = PREPOSITIONS | COORDINATORS
_FINITE_VERBS = SINGULAR_VERBS | PLURAL_VERBS
_NON_VERB_OPENERS = NOT_VERBS | NOMINATIVE_PRONOUNS | {"sie"}
_CONJUNCTIONS = frozenset(("und", "oder", "sowie"))
_RELATIVE_PREPOSITIONS = DAT_PREPOSITIONS | ACC_PREPOSITIONS | TWO_WAY_PREPOSITIONS
_RELATIVE = {
    "m": {"nom": "der", "gen": "dessen", "dat": "dem", "acc": "den"},
    "f": {"nom": "die", "gen": "deren", "dat": "der", "acc": "die"},
    "n": {"nom": "das", "gen": "dessen", "dat": "dem", "acc": "das"},
}
# The relative "welch-" (written style: "ein Junge, welcher lacht"), without a genitive.
_RELATIVE_WELCH = {
    "m": {"nom": "welcher", "dat": "welchem", "acc": "welchen"},
    "f": {"nom": "welche", "dat": "welcher", "acc": "welche"},
    "n": {"nom": "welches", "dat": "welchem", "acc": "welches"},
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
            if is_place_adjective(word):
                j -= 1  # an invariant place adjective: "des Berliner Arztes"
                continue
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
        if (
            word.endswith(_ADJECTIVE_ENDINGS)
            and len(word) > 3
            and word not in NOT_ADJECTIVES
            and word not in _FINITE_VERBS
            and not is_dative_verb(word)  # "dankte Onkeln", "gaben Müttern": verbs
        ):
            adjectives.append(j)
            j -= 1
            continue
        break
    # Without an article an adjective chain must open its phrase: after a preposition,
    # "und", a copula, a pronoun or other word that is no verb, or the clause start ("mit
    # jungen Ärzten", "ist staatlich geprüfter Krankenpfleger", "wurde sie medizinische
    # Wissenschaftlerin", "jetzt staatlich geprüfte"), or after a
    # noun in a copula's clause ("ist seit Jahren medizinischer Wissenschaftler"); not
    # after another verb ("wir helfen Kollegen").
    if (
        article is None
        and adjectives
        and not tokens.clause_start(j + 1)
        and lowers[j] not in _OPENERS
        and lowers[j] not in COPULAS
        and lowers[j] not in _NON_VERB_OPENERS
        and not (words[j][:1].isupper() and copula_before(tokens, j, COPULAS))
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
    if article is None and not adjectives and i > 1 and lowers[i - 1] in _CONJUNCTIONS:
        # "mit Brüdern und Schwestern": a bare second conjunct takes the first one's
        # number and case, when the first was read as a person's phrase.
        first = tokens.memo.get("phrase_slots", {}).get(i - 2)
        if first is not None and tokens.adjacent(i) and tokens.adjacent(i - 1):
            slots = {slot for slot in slots if slot[1:] == first[1:]} or slots
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
        predicative = copula_before(tokens, start) or singular_copula_after(tokens, i)
        slots = {slot for slot in slots if (slot[1] == "sg") == predicative}
    if (
        target is not None
        and start == i
        and len(slots) > 1
        and len({(slot[1], target.get(slot[1:])) for slot in slots}) == 1
    ):
        return NounPhrase(i, article, adjectives, min(slots), reading)
    slot = choose_slot(tokens, start, i, slots, preposition, names, bare=article is None)
    return NounPhrase(i, article, adjectives, slot, reading)


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
        for adjective in phrase.adjectives:  # "männliche Kollegen": only a sex adjective
            swapped = sex_adjective(tokens.lowers[adjective])
            if swapped:
                edits[adjective] = tokens.edit(adjective, swapped, "adjective")
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
    same_ending = old_ending == new_ending
    for adjective in phrase.adjectives:
        # "ein männlicher Kollege" -> "eine weibliche Kollegin": the stem swaps too.
        sex = tokens.lowers[adjective] in GENDERED_ADJECTIVE_FORMS
        if same_ending and not sex:
            continue  # the common case: nothing to change
        word = tokens.words[adjective]
        new = word[: len(word) - len(old_ending)] + new_ending
        if sex:
            new = sex_adjective(new.lower()) or new
        if new != word:
            edits[adjective] = tokens.edit(adjective, new, "adjective")
    return edits, possessive_slots


def sex_adjective(lower: str) -> str | None:
    """*männliche* -> *weibliche* and back (same ending), None for other words."""
    parts = GENDERED_ADJECTIVE_FORMS.get(lower)
    return GENDERED_ADJECTIVES[parts[0]] + parts[1] if parts else None


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
    old = phrase.reading.grammatical
    table = _RELATIVE_WELCH if word.startswith("welch") else _RELATIVE
    cases = [case for case, form in table[old].items() if form == word]
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
    new = table[gender][case]
    return tokens.edit(j, new, "relative") if new != word else None
