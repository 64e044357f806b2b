"""The generated occupational-sentences corpus.

Sentences in which the gender of the person working in each profession follows the U.S.
BLS share of women in it (the statistics behind BEC-Pro), written in 22 frames that are
deliberately *not* the five BEC-Pro templates, so that BEC-Pro measures a bias a model
generalises rather than memorised text. The demo model (:mod:`cdsbias.demo.base_model`) is
pre-trained on it, and the training data (``occupation_sentences`` in a recipe,
:mod:`cdsbias.train.data`) draws new sentences from it with another seed.

The professions and person words are read from the packaged BEC-Pro facts
(:mod:`cdsbias.resources`), not through the benchmark module.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple

from cdsbias.errors import unknown_name_error
from cdsbias.resources import load_professions, read_text

# Frames: {P} person phrase (sentence-initial or not), {J} profession with its article,
# {S} subject pronoun and {D} possessive agreeing with the person. None is a BEC-Pro template.
FRAMES = (
    "{P} has been {J} for years.",
    "{P} got a job as {J} last spring.",
    "everyone says {P} is a great {j}.",
    "{P} trained for a long time to be {J}.",
    "{P} retired after thirty years as {J}.",
    "{P} earns a living as {J}.",
    "when {P} was young, {S} dreamed of being {J}.",
    "{P} loves {D} job as {J}.",
    "last year {P} became {J}.",
    "{P} is a skilled {j}.",
    "{P} found work as {J} downtown.",
    "{P} quit {D} job as {J} in may.",
    "{P} was hired as {J} yesterday.",
    "the new {j} in our town is {P}.",
    "our {j} today was {P}.",
    "as {J}, {P} starts work early.",
    "{P} is proud to be {J}.",
    "{P} still works part time as {J}.",
    "{P} told us {S} is {J} now.",
    "{P} has always been {J} at heart.",
    "after school {P} wants to train as {J}.",
    "{P} met the other {j}s at a meeting.",
)
#: Languages the corpus is written in.
LANGUAGES = ("en", "de", "da")
SUBJECT = {"male": "he", "female": "she"}
POSSESSIVE = {"male": "his", "female": "her"}


def _with_article(profession: str) -> str:
    return ("an " if profession[0] in "aeiou" else "a ") + profession


class _Corpus(NamedTuple):
    sentences: Callable[[int, int], list[str]]
    person_words: Callable[[], set[str]]


def _other_language(language: str) -> _Corpus:
    if language == "de":
        from cdsbias.data import occupations_de

        return _Corpus(occupations_de.german_sentences, occupations_de.person_words)
    if language == "da":
        from cdsbias.data import occupations_da

        return _Corpus(occupations_da.danish_sentences, occupations_da.person_words)
    raise unknown_name_error("occupational-corpus language", language, LANGUAGES)


def person_words(language: str = "en") -> set[str]:
    """Lower-case person words and pronouns of a language's corpus (the last word of
    each person phrase, and the gendered pronouns)."""
    if language != "en":
        return _other_language(language).person_words()
    words = {w.split()[-1] for pair in person_pairs() for w in pair}
    return words | set(SUBJECT.values()) | set(POSSESSIVE.values())


def person_pairs() -> list[tuple[str, str]]:
    """The 9 BEC-Pro (male, female) person phrases."""
    lines = read_text("becpro", "persons_en.tsv").strip().splitlines()[1:]
    return [tuple(line.split("\t")[1:3]) for line in lines]  # type: ignore[misc]


def occupational_sentences(n: int, seed: int, language: str = "en") -> list[str]:
    """``n`` sentences; each profession's person is female with its share of women.

    ``en``: the 60 BEC-Pro professions with their BLS % female; ``de``: the same
    professions in German forms with the German shares (:mod:`.occupations_de`); ``da``:
    the occupations of DaWinoBias and ABC (:mod:`.occupations_da`).
    """
    if language != "en":
        return _other_language(language).sentences(n, seed)
    rng = random.Random(seed)
    professions = load_professions()[["profession", "percent_female_us"]].values.tolist()
    pairs = person_pairs()
    sentences = []
    for _ in range(n):
        profession, percent_female = professions[rng.randrange(len(professions))]
        gender = "female" if rng.random() < percent_female / 100 else "male"
        person = rng.choice(pairs)[0 if gender == "male" else 1]
        frame = rng.choice(FRAMES)
        text = frame.format(
            P=person, J=_with_article(profession), j=profession, S=SUBJECT[gender],
            D=POSSESSIVE[gender],
        )  # fmt: skip
        sentences.append(text[0].upper() + text[1:])
    return sentences
