"""Dropout debiasing (Webster et al. 2020): train with higher dropout on hidden states and
attention probabilities, which they found reduces gendered correlations (0.20 / 0.15 in
their BERT experiments). It changes how the model trains, not which weights train, so it
combines with any way of training.

``hidden_dropout_prob`` and ``attention_probs_dropout_prob`` override the model's dropout
when it is loaded for training, under each architecture's own config names
(:data:`DROPOUT_NAMES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import Method, register

#: The config names of BERT's hidden and attention dropout in other families. ModernBERT's
#: attention_dropout also covers the attention output projection.
DROPOUT_NAMES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "distilbert": (("dropout",), ("attention_dropout",)),
    "modernbert": (("embedding_dropout", "mlp_dropout"), ("attention_dropout",)),
}
_BERT_DROPOUT = (("hidden_dropout_prob",), ("attention_probs_dropout_prob",))


@dataclass
class DropoutOptions:
    """Training dropout."""

    hidden_dropout_prob: float | None = field(
        default=None,
        metadata={
            "help": "Dropout on hidden states while training (Webster et al. 2020: 0.20); "
            "null keeps the model's. DistilBERT: dropout; ModernBERT: embedding and MLP dropout."
        },
    )
    attention_probs_dropout_prob: float | None = field(
        default=None,
        metadata={
            "help": "Dropout on attention probabilities while training (Webster et al. 2020: "
            "0.15); null keeps the model's. DistilBERT and ModernBERT: attention_dropout."
        },
    )

    def __post_init__(self) -> None:
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, key)
            if value is not None and not 0.0 <= value < 1.0:
                raise CdsbiasError(f"{key} must be in [0, 1), got {value}.")


@register
class Dropout(Method):
    name = "dropout"
    role = "regularizer"
    title = "dropout"
    description = "trained with increased dropout"
    Options = DropoutOptions
    selected_by = "hidden_dropout_prob and/or attention_probs_dropout_prob"
    example: ClassVar[dict[str, Any]] = {
        "hidden_dropout_prob": 0.2,
        "attention_probs_dropout_prob": 0.15,
    }
    citation = (
        "Webster, K., Wang, X., Tenney, I., Beutel, A., Pitler, E., Pavlick, E., Chen, J., "
        "Chi, E., & Petrov, S. (2020). Measuring and Reducing Gendered Correlations in "
        "Pre-trained Models. arXiv:2010.06032."
    )
    card_tags = ("dropout-debiasing",)

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        return any(values.get(key) is not None for key in cls.option_keys())

    def config_overrides(self, model_type: str) -> dict[str, float]:
        """Config keyword arguments that set the dropout on a ``model_type`` model.

        Every family not in :data:`DROPOUT_NAMES` uses BERT's names; a loader that finds
        one of them missing from the model's config reports it.
        """
        hidden_names, attention_names = DROPOUT_NAMES.get(model_type, _BERT_DROPOUT)
        overrides: dict[str, float] = {}
        if self.options.hidden_dropout_prob is not None:
            overrides.update(dict.fromkeys(hidden_names, self.options.hidden_dropout_prob))
        if self.options.attention_probs_dropout_prob is not None:
            overrides.update(
                dict.fromkeys(attention_names, self.options.attention_probs_dropout_prob)
            )
        return overrides

    def values(self) -> list[str]:
        return [
            f"{v:.2f}" if v is not None else "default"
            for v in (self.options.hidden_dropout_prob, self.options.attention_probs_dropout_prob)
        ]

    def label(self, model: Any = None) -> str:
        return f"dropout {'/'.join(self.values())}"

    def card_text(self) -> str:
        hidden, attention = self.values()
        return (
            f"training used dropout {hidden} on hidden states and {attention} on attention "
            "probabilities (Webster et al. 2020)"
        )
