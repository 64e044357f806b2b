"""INLP's fit sentences on an axis other than gender: an attribute sentence vs a neutral one.

bias-bench (Meade et al. 2022) fits INLP on race and religion with two classes, not one
per group (``bias_bench/dataset/inlp.py``, ``_load_race_data`` and ``_load_religion_data``;
``bias_bench/debias/inlp/context_nullspace_projection.py``, ``_split_binary_dataset``): a
sentence naming *any* word of the axis is a *bias* sentence (label 1), one naming none is
*neutral* (label 0). The classifiers learn "is this sentence about the axis at all", and
INLP removes the directions that tell it. The same rule is kept here for race, religion and
any user axis; gender keeps bias-bench's three classes
(:func:`cdsbias.methods.fit_sentences.select_inlp_sentences`).

The selection loop differs from gender's in three ways, all bias-bench's and all kept: a
sentence naming several groups is kept (there are no sides to mix); ``idx`` is the first
occurrence of the *last* axis word of the sentence (the loop does not stop early); a
sentence is a neutral one only while the neutral class has room, and otherwise falls
through unused. Sentences are lower-cased and split at single spaces; sentences of fewer
than 5 words are skipped; each distinct attribute sentence is taken once; clips as gender's.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from cdsbias.methods.fit_words import (
    INLP_MIN_SENTENCES_PER_CLASS,
    INLP_SENTENCES_PER_CLASS,
    NEUTRAL,
    WordPairs,
    corpus_sentences,
    no_words_error,
    too_few_error,
)

#: bias-bench's class of sentences that name a word of the axis.
BIAS = "bias"
#: bias-bench's ``_split_binary_dataset`` labels.
ATTRIBUTE_LABELS = {BIAS: 1, NEUTRAL: 0}


@dataclass
class AttributeSentences:
    """INLP's fit sentences on a non-gender axis: clipped, lower-cased, per class, and how
    many of the bias sentences name each group (a record, not a class)."""

    bias: list[str] = field(default_factory=list)
    neutral: list[str] = field(default_factory=list)
    named: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {BIAS: len(self.bias), NEUTRAL: len(self.neutral)}

    @property
    def labels(self) -> dict[str, int]:
        return dict(ATTRIBUTE_LABELS)

    def labelled(self) -> tuple[list[str], list[int]]:
        """The bias sentences then the neutral ones, and their :data:`ATTRIBUTE_LABELS`."""
        return [*self.bias, *self.neutral], [1] * len(self.bias) + [0] * len(self.neutral)


def select_attribute_sentences(
    documents: Iterable[str],
    pairs: WordPairs,
    *,
    per_class: int = INLP_SENTENCES_PER_CLASS,
    min_per_class: int = INLP_MIN_SENTENCES_PER_CLASS,
    seed: int = 0,
) -> AttributeSentences:
    """Bias and neutral sentences, as bias-bench's ``_load_race_data`` (see the module
    docstring); ``random.Random(seed)`` draws the clips in bias-bench's order.

    Args:
        documents: Document texts, read lazily.
        pairs: The axis's word tuples (:func:`~cdsbias.methods.fit_sentences.axis_fit_words`).
        per_class: Sentences per class (bias-bench: 10,000).
        min_per_class: Fewest sentences either class may end with.
        seed: Seed of the clipping (bias-bench's ``--seed``, default 0).

    Raises:
        CdsbiasError: No sentence naming a group, or a class with fewer than
            ``min_per_class`` sentences (the counts, the groups never named, the fixes).
    """
    rng = random.Random(seed)
    group_of = {word: index for index in range(len(pairs.groups)) for word in pairs.words(index)}
    chosen = AttributeSentences(named=dict.fromkeys(pairs.groups, 0))
    seen: set[str] = set()
    for sentence in corpus_sentences(documents):
        tokens = [token.lower() for token in sentence.split(" ")]
        if len(tokens) < 5:
            continue
        idx = -1
        named: set[int] = set()
        for token in tokens:
            if token in group_of:
                named.add(group_of[token])
                idx = tokens.index(token)
        if not named and len(chosen.neutral) < per_class:
            chosen.neutral.append(" ".join(tokens[: rng.randint(4, len(tokens))]))
            continue
        if named and len(chosen.bias) < per_class and sentence not in seen:
            seen.add(sentence)
            chosen.bias.append(" ".join(tokens[: rng.randint(idx, len(tokens)) + 1]))
            for group in named:
                chosen.named[pairs.groups[group]] += 1
        if len(chosen.bias) >= per_class and len(chosen.neutral) >= per_class:
            break
    counts = chosen.counts()
    if counts[BIAS] == 0:
        raise no_words_error(pairs)
    if min(counts.values()) < min_per_class:
        missing = [group for group, count in chosen.named.items() if count == 0]
        note = (
            f"; the bias sentences name {', '.join(f'{g} {n}' for g, n in chosen.named.items())}"
            f" ({', '.join(missing)} never)"
            if missing
            else ""
        )
        raise too_few_error(counts, per_class, min_per_class, note)
    return chosen
