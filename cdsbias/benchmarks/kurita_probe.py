"""Kurita et al.'s log-probability bias of one sentence: ``cdsbias fill --attribute``.

    score = ln(P(a | x shown) / P(a | x masked)) - ln(P(b | x shown) / P(b | x masked))

for targets ``a``, ``b`` at the sentence's mask and its attribute word ``x``; it equals
:func:`cdsbias.benchmarks.kurita.bias_score` of the sentence as a template. Positive when
``x`` pulls towards ``a``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cdsbias.benchmarks.kurita import ATTRIBUTE_SLOT, TARGET_SLOT, bias_score
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.probes import _single_mask_ids


@dataclass(frozen=True)
class BiasProbe:
    """The two-sentence log-probability bias of targets ``a``, ``b`` for attribute ``x``.

    Attributes:
        template: The sentence with ``GGG`` (target slot) and ``XXX`` (attribute).
        a: First target word(s).
        b: Second target word(s).
        attribute: The attribute word.
        log_ratio_shown: ``ln P(a | x shown) - ln P(b | x shown)``.
        log_ratio_masked: ``ln P(a | x masked) - ln P(b | x masked)`` (the prior).
        score: ``log_ratio_shown - log_ratio_masked``.
        target_fill_bias: ``ln P(x | a) - ln P(x | b)`` with ``x`` masked.
    """

    template: str
    a: str
    b: str
    attribute: str
    log_ratio_shown: float
    log_ratio_masked: float
    score: float
    target_fill_bias: float


def log_probability_bias(
    scorer: MaskedLMScorer,
    sentence: str,
    targets: tuple[str, str],
    attribute: str,
) -> BiasProbe:
    """Kurita et al.'s increased log-probability score of ``targets`` for ``attribute``.

    Args:
        scorer: The shared scorer.
        sentence: Text with one ``[MASK]`` (where the targets go) and the attribute word,
            e.g. ``"[MASK] is a nurse."``.
        targets: ``(a, b)``, e.g. ``("he", "she")``.
        attribute: A whole word (or phrase) of ``sentence``, e.g. ``"nurse"``; its first
            whole-word occurrence is masked for the prior.

    Returns:
        A :class:`BiasProbe`; ``score > 0`` when the attribute raises ``a`` relative to ``b``.
    """
    _single_mask_ids(scorer, sentence)
    if len(targets) != 2:
        raise CdsbiasError(f"Two targets are needed for a bias score, got {len(targets)}.")
    word = attribute.strip()
    match = re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", sentence) if word else None
    if match is None:
        raise CdsbiasError(f"The attribute {attribute!r} is not a word of {sentence!r}.")
    template = sentence[: match.start()] + ATTRIBUTE_SLOT + sentence[match.end() :]
    template = scorer._slot_pattern.sub(TARGET_SLOT, template, count=1)
    scores = bias_score(scorer, template, (targets[0], targets[1]), word)
    return BiasProbe(
        template=template,
        a=targets[0],
        b=targets[1],
        attribute=word,
        log_ratio_shown=scores["gender_fill_bias"],
        log_ratio_masked=scores["gender_fill_prior_correction"],
        score=scores["gender_fill_bias_prior_corrected"],
        target_fill_bias=scores["target_fill_bias"],
    )
