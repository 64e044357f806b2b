"""Choosing the sentences a post-hoc erasure is fitted on, as bias-bench chooses them.

Meade et al. (2022, bias-bench) fit SentenceDebias and INLP on sentences of a Wikipedia
dump (``wikipedia-2.5.txt``). Here the sentences come from any corpus — an iterable of
document texts, so a streamed corpus works and is read only as far as needed — and the
selection follows bias-bench's code, for the run's bias axis (``bias_axis``, cdsbias.axes):

* **group sentences** (``bias_bench/dataset/inlp.py``, ``_load_gender_data``):
  :func:`select_inlp_sentences` — one class per group of the axis (male, female) and a
  neutral class, up to 10,000 each, with bias-bench's random clipping. INLP on gender and
  LEACE on every axis are fitted on these.
* **attribute sentences** (``_load_race_data`` / ``_load_religion_data``): bias-bench fits
  INLP on race and religion with two classes, a sentence naming any group vs a neutral one
  (:func:`cdsbias.methods.attribute_sentences.select_attribute_sentences`).
* **SentenceDebias** (``bias_bench/dataset/sentence_debias.py``, ``_gender_augment_func``,
  ``_race_augment_func``, ``_religion_augment_func``): :func:`select_counterfactual_sets`
  — each sentence with a word of a tuple, and its copies with that word swapped for each
  other group's word of the tuple (pairs for gender: :func:`select_counterfactual_pairs`).

Word tuples (:func:`axis_fit_words`) are the axis's own (cdsbias.axes; for gender: the
project's CDS pairs plus bias-bench's two pronoun pairs ``him/her`` and ``his/her``); for
gender, ``posthoc_word_pairs`` may name a bias-bench style JSON ``{"gender": [[male,
female], ...]}`` or a CDS-format TSV instead (:func:`load_fit_pairs`).

Quirks of bias-bench kept on purpose, so the same corpus gives the same sentences:
sentences are lower-cased and split into words at single spaces only, so a word with
punctuation attached ("he.", "mother,") does not count as an axis word (and such a sentence
can land in the neutral class); ``idx`` is the *first* occurrence of the last axis word
met; neutral sentences are not de-duplicated. One departure: bias-bench shuffles the whole
file first; here documents are read in the order given (a streamed corpus shuffles with its
buffer), because a stream cannot be shuffled as a whole.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from cdsbias.methods.fit_words import (
    DEFAULT_AXIS,
    GENDER_PAIRS_SOURCE,
    INLP_LABELS,
    INLP_MIN_SENTENCES_PER_CLASS,
    INLP_SENTENCES_PER_CLASS,
    NEUTRAL,
    WordPairs,
    axis_fit_words,
    binary_inlp,
    corpus_sentences,
    default_groups,
    group_labels,
    load_fit_pairs,
    missing_groups,
    no_words_error,
    too_few_error,
)

#: Re-exported: the words and classes of the fit (cdsbias.methods.fit_words).
__all__ = [
    "DEFAULT_AXIS",
    "GENDER_PAIRS_SOURCE",
    "INLP_LABELS",
    "INLP_MIN_SENTENCES_PER_CLASS",
    "INLP_SENTENCES_PER_CLASS",
    "NEUTRAL",
    "CounterfactualPairs",
    "CounterfactualSets",
    "InlpSentences",
    "WordPairs",
    "axis_fit_words",
    "binary_inlp",
    "corpus_sentences",
    "group_labels",
    "load_fit_pairs",
    "no_words_error",
    "select_counterfactual_pairs",
    "select_counterfactual_sets",
    "select_inlp_sentences",
    "too_few_error",
]


# ------------------------------------------------------------------------ group sentences
@dataclass
class InlpSentences:
    """Group sentences: clipped, lower-cased, one class per group of the axis and a
    neutral class (for gender ``male``, ``female``, ``neutral``, also readable as
    attributes)."""

    groups: tuple[str, ...] = field(default_factory=default_groups)
    classes: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in (*self.groups, NEUTRAL):
            self.classes.setdefault(name, [])

    def __getattr__(self, name: str) -> list[str]:
        classes = self.__dict__.get("classes")
        if classes is not None and name in classes:
            return classes[name]
        raise AttributeError(name)

    def counts(self) -> dict[str, int]:
        return {name: len(sentences) for name, sentences in self.classes.items()}

    @property
    def labels(self) -> dict[str, int]:
        """The classes' labels (:func:`group_labels`)."""
        return group_labels(self.groups)

    def labelled(self) -> tuple[list[str], list[int]]:
        """All sentences, group by group then neutral, and their :attr:`labels`."""
        sentences: list[str] = []
        labels: list[int] = []
        for name, label in self.labels.items():
            sentences += self.classes[name]
            labels += [label] * len(self.classes[name])
        return sentences, labels


def select_inlp_sentences(
    documents: Iterable[str],
    pairs: WordPairs,
    *,
    per_class: int = INLP_SENTENCES_PER_CLASS,
    min_per_class: int = INLP_MIN_SENTENCES_PER_CLASS,
    seed: int = 0,
) -> InlpSentences:
    """One class of sentences per group and a neutral class, as bias-bench's
    ``_load_gender_data`` (male, female, neutral) chooses them for gender INLP.

    Each sentence is lower-cased and split at spaces; sentences of fewer than 5 words are
    skipped; a sentence with words of two groups or more is skipped. A sentence with no
    axis word is *neutral* and clipped to its first ``randint(4, n)`` words; a sentence with
    words of one group is that group's (each distinct sentence once) and clipped to its
    first ``randint(idx, n) + 1`` words, ``idx`` the position of its axis word, so the clip
    always keeps it. Each class stops at ``per_class``; reading stops when all are full.
    ``random.Random(seed)`` draws the clips in bias-bench's order. With k groups (LEACE on a
    k-group axis) the same rules give k + 1 classes.

    Args:
        documents: Document texts, read lazily.
        pairs: The axis's word tuples (:func:`axis_fit_words`).
        per_class: Sentences per class (bias-bench: 10,000).
        min_per_class: Fewest sentences any class may end with.
        seed: Seed of the clipping (bias-bench's ``--seed``, default 0).

    Raises:
        CdsbiasError: No sentence naming a group at all, or a class with fewer than
            ``min_per_class`` sentences (the message gives each class's count and names
            the groups the corpus never names alone).
    """
    rng = random.Random(seed)
    groups = pairs.groups
    # A word of two groups (possible in a gender word-pair file) makes a sentence name both.
    group_of: dict[str, list[int]] = {}
    for index in range(len(groups)):
        for word in pairs.words(index):
            group_of.setdefault(word, []).append(index)
    chosen = InlpSentences(groups)
    seen: list[set[str]] = [set() for _ in groups]
    for sentence in corpus_sentences(documents):
        tokens = [token.lower() for token in sentence.split(" ")]
        if len(tokens) < 5:
            continue
        present: set[int] = set()
        idx = -1
        for token in tokens:
            named = group_of.get(token)
            if named is not None:
                present.update(named)
                idx = tokens.index(token)
            if len(present) > 1:
                break
        if not present:
            if len(chosen.neutral) < per_class:
                chosen.neutral.append(" ".join(tokens[: rng.randint(4, len(tokens))]))
        elif len(present) == 1:
            (group,) = present
            target = chosen.classes[groups[group]]
            if len(target) < per_class and sentence not in seen[group]:
                seen[group].add(sentence)
                target.append(" ".join(tokens[: rng.randint(idx, len(tokens)) + 1]))
        if min(chosen.counts().values()) >= per_class:
            break
    counts = chosen.counts()
    if sum(counts[group] for group in groups) == 0:
        raise no_words_error(pairs)
    if any(count < min_per_class for count in counts.values()):
        raise too_few_error(counts, per_class, min_per_class, missing_groups(pairs, counts))
    return chosen


# ----------------------------------------------------------------------- SentenceDebias
@dataclass
class CounterfactualSets:
    """SentenceDebias's fit sentences: row ``i`` of every group's list is one set, the same
    sentence naming each group in turn."""

    groups: tuple[str, ...]
    sentences: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.sentences:
            self.sentences = [[] for _ in self.groups]

    def __len__(self) -> int:
        return len(self.sentences[0])


@dataclass
class CounterfactualPairs:
    """SentenceDebias's gender fit sentences: row ``i`` of ``male`` and ``female`` is one
    pair."""

    male: list[str] = field(default_factory=list)
    female: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.male)


def _swap(words: list[str], old: str, new: str) -> str:
    return " ".join(new if word == old else word for word in words)


def select_counterfactual_sets(
    documents: Iterable[str], pairs: WordPairs, *, max_sets: int | None = None
) -> CounterfactualSets:
    """Counterfactual sentence sets for SentenceDebias, as bias-bench's augmentation.

    Each sentence is lower-cased, stripped and split at spaces; for every word tuple, in
    the list's order, and every group ``g`` in order whose word ``w_g`` is one of its words,
    the set is: for group ``g`` the sentence itself, for each other group ``h`` the sentence
    with every ``w_g`` replaced by ``w_h`` (bias-bench's ``_race_augment_func`` and
    ``_religion_augment_func`` for three groups, ``_gender_augment_func`` for two). A
    sentence with several axis words gives several sets, each swapping one word. (bias-bench
    unpacks its gender ``[male, female]`` entries as ``(female_word, male_word)``, so its
    "male_example" holds the female sentence; the principal components do not depend on
    the order, and here the sides are named as they are.)

    Args:
        documents: Document texts, read lazily.
        pairs: The axis's word tuples.
        max_sets: Stop after this many sets (bias-bench reads the whole file).

    Raises:
        CdsbiasError: If no sentence holds a word of any tuple.
    """
    chosen = CounterfactualSets(pairs.groups)
    rows = chosen.sentences
    for sentence in corpus_sentences(documents):
        text = sentence.lower().strip()
        words = text.split(" ")
        present = set(words)
        for words_of_tuple in pairs.pairs:
            for group, word in enumerate(words_of_tuple):
                if word in present:
                    for other, row in enumerate(rows):
                        row.append(
                            text if other == group else _swap(words, word, words_of_tuple[other])
                        )
        if max_sets is not None and len(chosen) >= max_sets:
            for row in rows:
                del row[max_sets:]
            break
    if not len(chosen):
        raise no_words_error(pairs)
    return chosen


def select_counterfactual_pairs(
    documents: Iterable[str], pairs: WordPairs, *, max_pairs: int | None = None
) -> CounterfactualPairs:
    """Counterfactual sentence pairs for gender SentenceDebias:
    :func:`select_counterfactual_sets` of the two groups (for each pair ``(m, f)``: if ``m``
    is a word of the sentence, (the sentence, the sentence with every ``m`` replaced by
    ``f``); if ``f`` is, (the sentence with every ``f`` replaced by ``m``, the sentence)).

    Raises:
        CdsbiasError: If no sentence holds a word of any pair.
    """
    chosen = select_counterfactual_sets(documents, pairs, max_sets=max_pairs)
    male, female = chosen.sentences
    return CounterfactualPairs(male, female)
