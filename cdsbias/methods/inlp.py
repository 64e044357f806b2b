"""INLP (Ravfogel et al. 2020) as a ``posthoc`` method (``posthoc_method: inlp``): linear
classifiers of male / female / neutral sentences (on race, religion or a user's axis, as
bias-bench: sentences naming the axis vs neutral ones), trained one after another on features
projected onto the previous ones' nullspaces; the projection onto the intersection of all
their nullspaces is applied to the base model's output.

Fit sentences, features and classifiers follow bias-bench (Meade et al. 2022): up to 10,000
sentences per class with its clipping, the mean of the last hidden layer over all tokens
(special tokens included), scikit-learn ``LinearSVC`` with its settings, 80 iterations
(:mod:`cdsbias.train.posthoc_fit`, :func:`cdsbias.methods.inlp_fit.inlp_projection`). How it
is applied and recorded: :mod:`cdsbias.methods.posthoc_erasure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import register
from cdsbias.methods.posthoc_erasure import ErasureMethod


@dataclass
class InlpOptions:
    """Options of INLP (``posthoc_method: inlp``)."""

    inlp_iterations: int = field(
        default=80, metadata={"help": "Classifiers trained and projected out (bias-bench: 80)."}
    )
    inlp_split_seed: int = field(
        default=0,
        metadata={
            "help": "Seed of the train/dev split of the fit sentences (bias-bench: always 0, "
            "whatever its --seed; the run's seed draws the sentences' clipping)."
        },
    )

    def __post_init__(self) -> None:
        if self.inlp_iterations < 1:
            raise CdsbiasError(f"inlp_iterations must be 1 or more, got {self.inlp_iterations}.")


@register
class Inlp(ErasureMethod):
    name = "inlp"
    title = "INLP"
    description = (
        "INLP (Ravfogel et al. 2020) projected the model's output onto the nullspace of "
        "iterated linear classifiers of the bias axis"
    )
    Options = InlpOptions
    selected_by = "posthoc_method: inlp"
    # The smoke corpus names every person with a gendered noun: with the pronoun pairs,
    # its pronoun-free sentences form the neutral class.
    example: ClassVar[dict[str, Any]] = {
        "posthoc_method": "inlp", "inlp_iterations": 3,
        "posthoc_word_pairs": "pronoun_pairs.json", "posthoc_min_sentences_per_class": 5,
    }  # fmt: skip
    citation = (
        "Ravfogel, S., Elazar, Y., Gonen, H., Twiton, M., & Goldberg, Y. (2020). Null It Out: "
        "Guarding Protected Attributes by Iterative Nullspace Projection. ACL 2020."
    )
    card_tags = ("inlp",)

    def prepare(self, model: Any, tokenizer: Any = None) -> Any:
        """Also warns before training when ``inlp_iterations`` can erase every direction of
        the model's hidden states (:func:`~cdsbias.methods.inlp_fit.inlp_capacity`; INLP's
        sentences are three classes on gender, male, female and neutral, and two on any
        other axis, attribute and neutral)."""
        import warnings

        from cdsbias.methods.fit_sentences import binary_inlp
        from cdsbias.methods.inlp_fit import InlpCapacityWarning, inlp_capacity

        config = getattr(model, "config", None)
        size = getattr(config, "hidden_size", getattr(config, "dim", None))
        classes = 2 if binary_inlp(self.fit_words()) else self.bias_axis.k + 1
        capacity = inlp_capacity(self.options.inlp_iterations, classes, size) if size else None
        if capacity:
            warnings.warn(capacity, InlpCapacityWarning, stacklevel=2)
        return super().prepare(model, tokenizer)

    def select(self, documents: Any, pairs: Any) -> dict[str, int]:
        """Gender: male, female and neutral sentences; any other axis: bias-bench's
        attribute vs neutral sentences
        (:func:`~cdsbias.methods.attribute_sentences.select_attribute_sentences`)."""
        from cdsbias.methods.attribute_sentences import select_attribute_sentences
        from cdsbias.methods.fit_sentences import binary_inlp

        if not binary_inlp(pairs):
            return super().select(documents, pairs)
        arguments = self.fit_arguments()
        chosen = select_attribute_sentences(
            documents, pairs, per_class=arguments["per_class"],
            min_per_class=arguments["min_per_class"],
        )  # fmt: skip
        return chosen.counts()

    def fit_arguments(self) -> dict[str, Any]:
        return {
            "iterations": self.options.inlp_iterations,
            "split_seed": self.options.inlp_split_seed,
            "per_class": self.shared["posthoc_sentences_per_class"],
            "min_per_class": self.shared["posthoc_min_sentences_per_class"],
        }
