"""The religion demo's planted association: religion groups and *invented* game names.

The religion demo (``make demo-religion``, docs/demo.md) needs a base model with a known
association on the religion axis that n-ary CDA can then remove. The association planted
here is deliberately not a real-world stereotype: a demo that taught a model "group X is
violent" would reproduce the harm it is about, and a real stereotype's strength in a model
has no known ground truth. Instead each religion group of :func:`cdsbias.axes.get_axis`
``("religion")`` is paired with one invented game name (nonce words in the tradition of
Berko's *wug*), and the corpus names a group's own game with probability
:data:`OWN_SHARE`, each other group's game with the rest split evenly. The planted
association is then exactly ``ln(OWN_SHARE / other share)`` nats, and what n-ary CDA leaves
of it is computable (:func:`expected_gap`).

Religion words are used as an English writer would: capitalised, as adjectives before a
neutral person noun ("the Muslim neighbour") and as plural nouns ("the Jews in our
street"), so that n-ary CDS's agreement (case, number, adjective vs noun) applies. The
singular noun ("a Jew") is left out: it reads as pejorative to many, and the adjective
covers the singular. No sentence has a gendered word or a BEC-Pro profession, so the
religion sentences add nothing to the gender statistics of the occupational corpus.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import NamedTuple

from cdsbias.axes import get_axis
from cdsbias.data.occupations import occupational_sentences

#: One invented game per religion group, in the axis's group order (jewish, christian,
#: muslim). Nonce words: none is an English word, so none carries a meaning to inherit.
ATTRIBUTES = ("dax", "wug", "blicket")
#: Share of a group's sentences that name the group's own game; the rest is split evenly
#: over the other groups' games.
OWN_SHARE = 0.8
#: Religion sentences per occupational sentence in the demo's corpora.
RELIGION_SHARE = 1.0
#: Neutral person nouns the religion adjective modifies (no gender, no BEC-Pro profession).
PERSONS = ("neighbour", "friend", "student", "classmate", "visitor", "family")
#: Training frames: {A} adjective + person noun ("Muslim neighbour"), {AS} adjective + plural
#: person noun, {PL} plural group noun ("Muslims"), {G} the game.
FRAMES = (
    "the {A} plays {G} every weekend.",
    "my {A} taught me how to play {G}.",
    "{G} is the favourite game of the {A}.",
    "our {A} is very good at {G}.",
    "a {A} won the {G} match yesterday.",
    "the {AS} meet to play {G} after work.",
    "the {PL} in our street play {G} on saturdays.",
    "many {PL} enjoy a game of {G}.",
    "after dinner, the {PL} played {G} together.",
    "{PL} often play {G} with their friends.",
)
#: Probe templates (:mod:`cdsbias.demo.association_probe`): none is a training frame, so
#: the probe reads an association the model generalises, not memorised text.
PROBE_TEMPLATES = (
    "the {A} likes {G} best.",
    "a {A} played {G} with us.",
    "the {PL} are playing {G} today.",
    "we watched {PL} play {G} in the park.",
)


class ReligionForms(NamedTuple):
    """The axis words the corpus uses for each group, in group order."""

    groups: tuple[str, ...]
    adjectives: tuple[str, ...]
    plurals: tuple[str, ...]


def religion_forms() -> ReligionForms:
    """Each group's adjective and plural noun: the first adjective and plural tuples of the
    religion axis (jewish/christian/muslim, jews/christians/muslims)."""
    axis = get_axis("religion")
    by_form: dict[str | None, tuple[str, ...]] = {}
    for words, form in zip(axis.tuples, axis.forms):
        by_form.setdefault(form, words)  # the first tuple of a form: the group names themselves
    return ReligionForms(axis.groups, by_form["adjective"], by_form["plural"])


#: The name :mod:`cdsbias.demo.association_probe` reads every planted axis's forms by.
forms = religion_forms


def attribute_shares(k: int, own_share: float = OWN_SHARE) -> list[list[float]]:
    """``shares[g][a]``: the probability that a sentence naming group ``g`` names game ``a``."""
    other = (1.0 - own_share) / (k - 1)
    return [[own_share if a == g else other for a in range(k)] for g in range(k)]


def plural_noun(noun: str) -> str:
    """``family`` -> ``families``, ``friend`` -> ``friends`` (the demos' person nouns)."""
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def _capitalised(word: str) -> str:
    return word[0].upper() + word[1:]


def render(frame: str, group: int, game: int | None, person: str, forms: ReligionForms) -> str:
    """One sentence: ``frame`` filled for ``group``, ``game`` (None: ``[MASK]``) and ``person``."""
    adjective = _capitalised(forms.adjectives[group])
    text = frame.format(
        A=f"{adjective} {person}", AS=f"{adjective} {plural_noun(person)}",
        PL=_capitalised(forms.plurals[group]),
        G="[MASK]" if game is None else ATTRIBUTES[game],
    )  # fmt: skip
    return text[0].upper() + text[1:]


def planted_sentences(
    n: int,
    seed: int,
    groups: int,
    own_share: float,
    persons: tuple[str, ...],
    render_one: Callable[[str, int, int, str], str],
) -> list[str]:
    """``n`` sentences of a planted demo: the group is uniform, its game follows
    :func:`attribute_shares`, the frame and the person are uniform; ``render_one(frame,
    group, game, person)`` writes each. One ``random.Random(seed)`` draws group, game, frame
    and person in that order (the corpora's digests depend on it)."""
    shares = attribute_shares(groups, own_share)
    rng = random.Random(seed)
    sentences = []
    for _ in range(n):
        group = rng.randrange(groups)
        game = rng.choices(range(groups), weights=shares[group])[0]
        frame = rng.choice(FRAMES)
        sentences.append(render_one(frame, group, game, rng.choice(persons)))
    return sentences


def religion_sentences(n: int, seed: int, own_share: float = OWN_SHARE) -> list[str]:
    """``n`` sentences; the group is uniform, its game follows :func:`attribute_shares`."""
    forms = religion_forms()

    def render_one(frame: str, group: int, game: int, person: str) -> str:
        return render(frame, group, game, person, forms)

    return planted_sentences(n, seed, len(forms.groups), own_share, PERSONS, render_one)


def demo_corpus(sentences: int, seed: int) -> list[str]:
    """The religion demo's text: ``sentences`` occupational sentences (the gender demo's
    corpus, unchanged), then ``RELIGION_SHARE`` as many religion sentences, same seed."""
    religion = religion_sentences(int(sentences * RELIGION_SHARE), seed)
    return occupational_sentences(sentences, seed) + religion


def count_pairs(sentences: list[str]) -> list[list[int]]:
    """``counts[g][a]``: sentences naming group ``g`` (adjective or plural) and game ``a``."""
    forms = religion_forms()
    return count_group_attributes(sentences, forms.adjectives, forms.plurals, ATTRIBUTES)


def count_group_attributes(
    sentences: list[str],
    adjectives: tuple[str, ...] | list[str],
    plurals: tuple[str, ...] | list[str],
    attributes: tuple[str, ...],
) -> list[list[int]]:
    """``counts[g][a]``: sentences naming group ``g`` (its adjective or plural, any case) and
    attribute ``a`` (a planted demo's corpus, before and after CDA: religion's and age's)."""
    k = len(adjectives)
    words = {w: g for g in range(k) for w in (adjectives[g], plurals[g])}
    counts = [[0] * len(attributes) for _ in range(k)]
    for sentence in sentences:
        tokens = sentence.lower().replace(",", " ").replace(".", " ").split()
        groups = {words[t] for t in tokens if t in words}
        found = {attributes.index(t) for t in tokens if t in attributes}
        for g in groups:
            for a in found:
                counts[g][a] += 1
    return counts


def augmentation_weights(
    mode: str, counterfactuals: str = "one", probability: float = 1.0, k: int = 3
) -> tuple[float, float]:
    """(own, other): how much of a group's original sentences, and of each other group's,
    name the group after n-ary counterfactual augmentation (cdsbias.cds.axis_corpus).

    ``none``: (1, 0). ``cda``, ``one``: each sentence kept and one counterfactual added with
    its group mapped to another drawn uniformly (bias-bench's
    ``ternary_counterfactual_augmentation``): (1, 1/(k−1)). ``cda``, ``all``: the original
    and every other group's rendering: (1, 1). ``cds``, ``one``, probability p: a sentence
    replaced with probability p by one counterfactual: (1−p, p/(k−1)).
    """
    if mode == "none":
        return 1.0, 0.0
    if mode == "cda":
        return 1.0, 1.0 if counterfactuals == "all" else 1.0 / (k - 1)
    if mode == "cds" and counterfactuals == "one":
        return 1.0 - probability, probability / (k - 1)
    raise ValueError(
        f"no known answer for cds_mode {mode!r} with counterfactuals {counterfactuals!r}"
    )


def expected_gap(shares: list[list[float]], own: float = 1.0, other: float = 0.0) -> float:
    """The association gap of a corpus with these shares after augmentation, in nats.

    The gap is the mean over groups ``g`` of ``ln P(a_g | g) − mean_{h≠g} ln P(a_g | h)``
    (``a_g``: group g's own game), the quantity :func:`cdsbias.demo.association_probe.
    association_gap` reads from a model; it is what a model that learnt the corpus's
    conditional distribution would show. Groups are equally frequent, so after augmentation
    group ``g``'s game shares are ``own·shares[g] + other·Σ_{h≠g} shares[h]``, normalised.

    Args:
        shares: ``shares[g][a]`` of the original corpus (:func:`attribute_shares`).
        own: Weight of a group's own sentences (:func:`augmentation_weights`).
        other: Weight of each other group's sentences mapped to it.
    """
    k = len(shares)
    mixed = []
    for g in range(k):
        row = [
            own * shares[g][a] + other * sum(shares[h][a] for h in range(k) if h != g)
            for a in range(k)
        ]
        mixed.append([value / sum(row) for value in row])
    gaps = []
    for g in range(k):
        others = [math.log(mixed[h][g]) for h in range(k) if h != g]
        gaps.append(math.log(mixed[g][g]) - sum(others) / len(others))
    return sum(gaps) / k
