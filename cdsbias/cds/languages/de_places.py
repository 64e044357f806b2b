"""German words that look like person nouns but are place adjectives (*der Berliner Senat*).

A city, region or country forms an invariant, capitalised adjective in *-er* (*Berliner,
Frankfurter, Münchner, Schweizer*) that is spelled like the demonym noun the person-noun
lexicon pairs with a feminine (*der Berliner* <-> *die Berlinerin*). Read as that noun,
*die Frankfurter Börse* would become *die Frankfurterinnen Börse*: text with no gendered
reference changed, the worst error a substitution can make. Two guards:

* **attributive**: an *-er* word directly before a capitalised word (not a given name) is an
  adjective, never swapped, when it is a place adjective of ``de/place_adjectives.tsv``
  or a compound ending in one (*der Berliner Senat, im Münchner Westen, Schweizer Käse,
  der Ostberliner Senat*, and *der Berliner Arzt*,
  where only *Arzt* changes) or when it is no person noun of the lexicon at all but was
  found as a compound or by a person suffix (*Ostberliner Senat*);
* **predicative**: a bare place adjective after a copula is the demonym only when the
  clause has a person in it (*Er ist Berliner*, *Meine Mutter ist Berlinerin*), not
  about a thing (*Der Senat ist Berliner*).

Each refusal is reported as a :class:`~cdsbias.cds.languages.base.Skip` with reason
``"place adjective"``; the noun-phrase reader steps over a place adjective like an
uninflected adjective (*des Berliner Arztes*).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from cdsbias.cds.languages.de_case import COPULAS
from cdsbias.cds.languages.de_tokens import Tokens
from cdsbias.cds.wordlists import data_lines, resource_path

#: The reason of the skips this module reports.
PLACE_SKIP = "place adjective"
# Words in a clause that make its subject a person, besides person nouns and names.
_PERSON_PRONOUNS = frozenset(("ich", "du", "er", "sie", "wir", "ihr"))


@functools.cache
def place_adjectives() -> frozenset[str]:
    """The place adjectives of ``de/place_adjectives.tsv`` (*Berliner, Münchner, ...*)."""
    path = resource_path("de/place_adjectives.tsv")
    return frozenset(
        form for _, line in data_lines(path) for form in line.split("\t")[1].split("|")
    )


@functools.lru_cache(maxsize=1 << 14)
def is_place_adjective(word: str) -> bool:
    """``word`` is a place adjective or a compound ending in one (*Ostberliner*)."""
    places = place_adjectives()
    if word in places:
        return True
    return any(word[cut:].capitalize() in places for cut in range(2, len(word) - 4))


def attributive(tokens: Tokens, i: int, names: dict[str, str]) -> bool:
    """Word ``i`` stands right before a capitalised word that is no given name: an
    adjective there (*Frankfurter Börse*, *Junge Leute*)."""
    words = tokens.words
    if i + 1 >= len(words) or not tokens.adjacent(i + 1):
        return False
    following = words[i + 1]
    return following[:1].isupper() and following not in names


def predicative_about_a_thing(tokens: Tokens, i: int, is_person: Callable[[str], bool]) -> bool:
    """Bare word ``i`` follows a copula in a clause with no person in it (*Der Senat ist
    Berliner*). ``is_person(word)``: whether a word names a person (noun or name)."""
    if i == 0 or not tokens.adjacent(i) or tokens.lower(i - 1) not in COPULAS:
        return False
    j = i - 2
    while j >= 0:
        word = tokens.words[j]
        if tokens.lower(j) in _PERSON_PRONOUNS or (word[:1].isupper() and is_person(word)):
            return False
        if tokens.clause_start(j):
            break
        j -= 1
    return True
