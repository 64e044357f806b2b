"""LEACE (Belrose et al. 2023) as a ``posthoc`` method (``posthoc_method: leace``): the
least-squares affine map after which no linear classifier tells the classes apart (the
class-conditional means of the erased features are equal), applied to the base model's
output (``W ← W·P``, ``c ← c + W·b`` when folded).

Fitted with EleutherAI's ``concept-erasure`` on INLP's features of the group sentences
(bias-bench has no LEACE): one class per group of the run's bias axis and a neutral class
(male, female, neutral for gender; k + 1 classes for a k-group axis), so the k group means
and the neutral mean are made equal: :func:`cdsbias.methods.erasure.leace_eraser`. How it
is applied and recorded: :mod:`cdsbias.methods.posthoc_erasure`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from cdsbias.methods.base import register
from cdsbias.methods.posthoc_erasure import ErasureMethod


@register
class Leace(ErasureMethod):
    name = "leace"
    title = "LEACE"
    description = (
        "LEACE (Belrose et al. 2023) erased the linearly available information of the bias "
        "axis's groups from the model's output in closed form"
    )
    selected_by = "posthoc_method: leace"
    example: ClassVar[dict[str, Any]] = {
        "posthoc_method": "leace", "posthoc_word_pairs": "pronoun_pairs.json",
        "posthoc_min_sentences_per_class": 5,
    }  # fmt: skip
    citation = (
        "Belrose, N., Schneider-Joseph, D., Ravfogel, S., Cotterell, R., Raff, E., & "
        "Biderman, S. (2023). LEACE: Perfect linear concept erasure in closed form. "
        "NeurIPS 2023."
    )
    card_tags = ("leace",)

    def fit_arguments(self) -> dict[str, Any]:
        return {
            "per_class": self.shared["posthoc_sentences_per_class"],
            "min_per_class": self.shared["posthoc_min_sentences_per_class"],
        }
