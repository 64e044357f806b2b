"""Helpers shared by the sentence-scoring benchmarks (ABC, CrowS-Pairs, StereoSet).

* :func:`check_language` warns when a benchmark's language does not fit the model's
  vocabulary (an English model on the Danish ABC, a Danish model on CrowS-Pairs), with the
  fix in the message.
* :func:`sequence_log_probs` reads ``ln P(target_i | input)`` at *every* requested position
  of unmasked or partly masked inputs through the scorer's batching and deduplication.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from cdsbias.scoring.scorer import MaskedLMScorer

#: Frequent words that any model trained on the language keeps as one vocabulary entry,
#: and that a model of another language usually splits into pieces.
PROBE_WORDS: dict[str, tuple[str, ...]] = {
    "en": (
        "the", "and", "because", "would", "people", "woman", "should", "their", "which",
        "about", "never", "always",
    ),
    "da": (
        "ikke", "også", "hendes", "efter", "havde", "skulle", "kunne", "blev", "meget",
        "fordi", "hvor", "altid",
    ),
}  # fmt: skip
LANGUAGE_NAMES = {"en": "English", "da": "Danish"}
#: Below this share of single-piece probe words the model is taken not to know the language.
MIN_COVERAGE = 0.5


def _article(word: str) -> str:
    return "an" if word[:1].upper() in "AEIOU" else "a"


class LanguageMismatchWarning(UserWarning):
    """The benchmark's language does not seem to be a language of the model."""


def word_pieces(tokenizer: Any, word: str) -> list[str]:
    """The pieces ``word`` gets after a space, as inside a sentence (no special tokens)."""
    ids = tokenizer(" " + word, add_special_tokens=False)["input_ids"]
    return list(tokenizer.convert_ids_to_tokens(ids))


def language_coverage(tokenizer: Any, language: str) -> tuple[float, list[tuple[str, list[str]]]]:
    """Share of the language's probe words that are one non-unknown vocabulary entry.

    Returns:
        ``(share, split)`` where ``split`` lists the probe words that were split (or became
        the unknown token) with their pieces.
    """
    words = PROBE_WORDS[language]
    unk = getattr(tokenizer, "unk_token", None)
    split = []
    for word in words:
        pieces = word_pieces(tokenizer, word)
        if len(pieces) != 1 or pieces[0] == unk:
            split.append((word, pieces))
    return 1.0 - len(split) / len(words), split


def check_language(
    scorer: MaskedLMScorer, language: str, benchmark: str, alternatives: str = ""
) -> float | None:
    """Warns (:class:`LanguageMismatchWarning`) if the model's vocabulary misses the language.

    Args:
        scorer: The scorer whose tokenizer is checked.
        language: The benchmark's language code.
        benchmark: The benchmark's name, for the message.
        alternatives: A hint at benchmarks in other languages, appended to the fix.

    Returns:
        The probe-word coverage, or ``None`` for a language without probe words.
    """
    if language not in PROBE_WORDS:
        return None
    share, split = language_coverage(scorer.tokenizer, language)
    if share < MIN_COVERAGE:
        name = LANGUAGE_NAMES.get(language, language)
        word, pieces = split[0]
        total = len(PROBE_WORDS[language])
        warnings.warn(
            f"Benchmark '{benchmark}' is {name}, but only {total - len(split)} of {total} "
            f"common {name} words are single entries of this model's vocabulary (e.g. "
            f"{word!r} -> {pieces}); the model does not look trained on {name}, so its scores "
            f"here mean little. Fix: evaluate {_article(name)} {name} or multilingual model on "
            f"'{benchmark}'{alternatives}.",
            LanguageMismatchWarning,
            stacklevel=3,
        )
    return share


def sequence_log_probs(
    scorer: MaskedLMScorer,
    inputs: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    positions: Sequence[Sequence[int]] | None = None,
) -> list[np.ndarray]:
    """``ln softmax(f(inputs[i]))[p, targets[i][p]]`` at each position ``p`` of each input.

    The input is run as given (nothing is masked here), which is what GenDa Lens' ABC
    "perplexity" needs: the labels (``targets``) may differ from the input tokens.

    Args:
        scorer: The shared scorer (batching, deduplication, projection at read positions).
        inputs: Token ids including special tokens.
        targets: Label ids aligned with each input (same length).
        positions: Positions to read per input; default: every position.

    Returns:
        One float64 array per input, aligned with its positions.
    """
    if len(inputs) != len(targets):
        raise ValueError(f"{len(inputs)} inputs but {len(targets)} label sequences")
    chosen: list[list[int]] = []
    for index, (ids, labels) in enumerate(zip(inputs, targets, strict=True)):
        if len(labels) != len(ids):
            raise ValueError(f"input {index} has {len(ids)} tokens but {len(labels)} labels")
        chosen.append(
            list(range(len(ids))) if positions is None else [int(p) for p in positions[index]]
        )
    # Identical (input, position) pairs are run once, and batches are capped by read rows
    # x vocabulary, inside the scorer.
    flat_inputs: list[tuple[int, ...]] = []
    for ids, read in zip(inputs, chosen, strict=True):
        flat_inputs.extend([tuple(ids)] * len(read))
    flat_positions = [p for read in chosen for p in read]
    flat_targets = [
        int(labels[p]) for labels, read in zip(targets, chosen, strict=True) for p in read
    ]
    scores = scorer.token_log_probs(flat_inputs, flat_positions, flat_targets)
    sizes = [len(read) for read in chosen]
    return list(np.split(scores, np.cumsum(sizes)[:-1])) if sizes else []
