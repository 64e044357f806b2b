"""The age demo's planted association: young and old people and *invented* game names.

The age counterpart of :mod:`cdsbias.demo.religion` (``make demo-age``, docs/demo.md), for
the same reasons: the association is not a real-world stereotype (a demo that taught a
model "old people cannot use phones" would reproduce the harm it is about) but the age
axis's two groups (:func:`cdsbias.axes.get_axis` ``("age")``: young, old) paired with one
invented game each (*dax*, *wug*), the own game in :data:`OWN_SHARE` of a group's
sentences. The planted gap is ``ln(0.8 / 0.2) = 1.386`` nats, and with two groups
bias-bench's CDA (one counterfactual, drawn from the *other* groups) is the full swap: every
sentence also appears with the other group, so the fine-tuning text holds **no**
association (:func:`cdsbias.demo.religion.expected_gap` with k = 2: 0).

Age words are used as an English writer uses them: lower case, the adjective before a
neutral person noun ("my young neighbour", "the old students"), and the plural nouns
*teenagers* and *retirees*, so that age CDS's rules apply (the adjectives are swapped only
before a person noun, :attr:`cdsbias.axes.BiasAxis.people_only`). The frames and the probe
templates are the religion demo's; no sentence has a gendered word or a BEC-Pro profession.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from cdsbias.axes import get_axis
from cdsbias.data.occupations import occupational_sentences
from cdsbias.demo.religion import (
    FRAMES,
    PROBE_TEMPLATES,
    count_group_attributes,
    planted_sentences,
    plural_noun,
)

__all__ = ["ATTRIBUTES", "FRAMES", "PERSONS", "PROBE_TEMPLATES", "forms", "render"]

#: One invented game per age group, in the axis's group order (young, old).
ATTRIBUTES = ("dax", "wug")
#: Share of a group's sentences that name the group's own game.
OWN_SHARE = 0.8
#: Age sentences per occupational sentence in the demo's corpora.
AGE_SHARE = 1.0
#: Neutral person nouns the age adjective modifies (no gender, no BEC-Pro profession; each
#: a person noun of the English CDS rules, so age CDS swaps the adjective before it).
PERSONS = ("neighbour", "friend", "student", "family")


class AgeForms(NamedTuple):
    """The axis words the corpus uses for each group, in group order."""

    groups: tuple[str, ...]
    adjectives: tuple[str, ...]
    plurals: tuple[str, ...]


def forms() -> AgeForms:
    """Each group's adjective and plural noun: the age axis's first adjective and plural
    tuples (young/old, teenagers/retirees)."""
    axis = get_axis("age")
    by_form: dict[str | None, tuple[str, ...]] = {}
    for words, form in zip(axis.tuples, axis.forms):
        by_form.setdefault(form, words)
    return AgeForms(axis.groups, by_form["adjective"], by_form["plural"])


def render(frame: str, group: int, game: int | None, person: str, words: AgeForms) -> str:
    """One sentence: ``frame`` filled for ``group``, ``game`` (None: ``[MASK]``) and
    ``person``; only the sentence's first letter is a capital."""
    adjective = words.adjectives[group]
    text = frame.format(
        A=f"{adjective} {person}", AS=f"{adjective} {plural_noun(person)}",
        PL=words.plurals[group], G="[MASK]" if game is None else ATTRIBUTES[game],
    )  # fmt: skip
    text = re.sub(r"\b([Aa]) (?=[aeiou])", r"\1n ", text)  # "an old neighbour"
    return text[0].upper() + text[1:]


def age_sentences(n: int, seed: int, own_share: float = OWN_SHARE) -> list[str]:
    """``n`` sentences; the group is uniform, its game follows
    :func:`~cdsbias.demo.religion.attribute_shares`."""
    words = forms()

    def render_one(frame: str, group: int, game: int, person: str) -> str:
        return render(frame, group, game, person, words)

    return planted_sentences(n, seed, len(words.groups), own_share, PERSONS, render_one)


def demo_corpus(sentences: int, seed: int) -> list[str]:
    """The age demo's text: ``sentences`` occupational sentences (the gender demo's corpus,
    unchanged), then ``AGE_SHARE`` as many age sentences, same seed."""
    return occupational_sentences(sentences, seed) + age_sentences(int(sentences * AGE_SHARE), seed)


def count_pairs(sentences: list[str]) -> list[list[int]]:
    """``counts[g][a]``: sentences naming group ``g`` (adjective or plural) and game ``a``."""
    words = forms()
    return count_group_attributes(sentences, words.adjectives, words.plurals, ATTRIBUTES)
