"""SentenceDebias (Liang et al. 2020) as a ``posthoc`` method (``posthoc_method:
sentence_debias``): the first principal component(s) of counterfactual sentence sets'
embeddings, sign-fixed, projected out of the base model's output, ``P = I − U Uᵀ``.

Fit sentences, features and the fit follow bias-bench (Meade et al. 2022): every corpus
sentence with a word of a tuple of the run's bias axis and its copies with the word swapped
for each other group's (pairs for gender, triples for race and religion); the attention-masked
mean of the last hidden layer, L2-normalised, inputs cut at 128 tokens
(:mod:`cdsbias.train.posthoc_fit`, :func:`cdsbias.methods.erasure.group_subspace`).
How it is applied and recorded: :mod:`cdsbias.methods.posthoc_erasure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import register
from cdsbias.methods.posthoc_erasure import ErasureMethod


@dataclass
class SentenceDebiasOptions:
    """Options of SentenceDebias (``posthoc_method: sentence_debias``)."""

    sentence_debias_components: int = field(
        default=1, metadata={"help": "Principal components removed (bias-bench: 1)."}
    )
    sentence_debias_max_pairs: int | None = field(
        default=None,
        metadata={
            "help": "Cap on the counterfactual pairs (sets, on a k-group axis) fitted on "
            "(null: the whole corpus)."
        },
    )

    def __post_init__(self) -> None:
        if self.sentence_debias_components < 1:
            raise CdsbiasError(
                f"sentence_debias_components must be 1 or more, got "
                f"{self.sentence_debias_components}."
            )
        cap = self.sentence_debias_max_pairs
        if cap is not None and cap < 2:
            raise CdsbiasError(f"sentence_debias_max_pairs must be 2 or more, got {cap}.")


@register
class SentenceDebias(ErasureMethod):
    name = "sentence_debias"
    title = "SentenceDebias"
    description = (
        "SentenceDebias (Liang et al. 2020) projected the bias direction of counterfactual "
        "sentence sets (one sentence per group of the bias axis) out of the model's output"
    )
    Options = SentenceDebiasOptions
    selected_by = "posthoc_method: sentence_debias"
    example: ClassVar[dict[str, Any]] = {"posthoc_method": "sentence_debias"}
    citation = (
        "Liang, P. P., Li, I. M., Zheng, E., Lim, Y. C., Salakhutdinov, R., & Morency, L.-P. "
        "(2020). Towards Debiasing Sentence Representations. ACL 2020."
    )
    card_tags = ("sentence-debias",)

    def select(self, documents: Any, pairs: Any) -> dict[str, int]:
        from cdsbias.methods.fit_sentences import select_counterfactual_sets

        chosen = select_counterfactual_sets(
            documents, pairs, max_sets=self.options.sentence_debias_max_pairs
        )
        return {"pairs" if len(pairs.groups) == 2 else "sets": len(chosen)}

    def fit_arguments(self) -> dict[str, Any]:
        return {
            "components": self.options.sentence_debias_components,
            "max_pairs": self.options.sentence_debias_max_pairs,
        }
