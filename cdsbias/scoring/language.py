"""Language check of the sentence-scoring benchmarks (ABC, CrowS-Pairs, StereoSet).

:func:`check_language` warns when a benchmark's language does not fit the model's
vocabulary (an English model on the Danish ABC, a Danish model on CrowS-Pairs), with the
fix in the message.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

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
