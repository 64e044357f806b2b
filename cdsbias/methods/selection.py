"""The recipe keys that choose methods: which way of training (``peft_method``), which loss
term (``debias_loss``), which post-hoc step (``posthoc_method`` and the keys its fits
share). Each method's own keys live in its module."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from cdsbias.errors import CdsbiasError, unknown_name_error
from cdsbias.methods.base import REGISTRY


@dataclass
class MethodSelection:
    """Which parameter-efficient method trains (partial fine-tuning is chosen by
    ``trainable_parameters``, full fine-tuning by choosing nothing)."""

    peft_method: Literal["none", "lora", "adapter"] = field(
        default="none",
        metadata={
            "help": "'none' (fine-tune the weights), 'lora' (peft LoRA on lora_target_modules) "
            "or 'adapter' (Pfeiffer bottleneck adapters after each feed-forward block, base "
            "frozen, as ADELE)."
        },
    )


def selector_values(key: str) -> list[str]:
    """The methods a selector key (``debias_loss``, ...) can name: those whose
    ``selected_by`` reads ``KEY: NAME``."""
    from cdsbias.methods import load_all

    load_all()
    return sorted(cls.name for cls in REGISTRY.values() if cls.selected_by == f"{key}: {cls.name}")


@dataclass
class LossSelection:
    """Which loss term (role ``loss``) is added to the masked-LM objective."""

    debias_loss: str = field(
        default="none",
        metadata={
            "help": "'none', or a debiasing loss term added to the MLM loss while training: "
            "'context_debias' (Kaneko & Bollegala 2021; its context_debias_* keys)."
        },
    )

    def __post_init__(self) -> None:
        names = selector_values("debias_loss")
        if self.debias_loss != "none" and self.debias_loss not in names:
            raise unknown_name_error("debias_loss", self.debias_loss, ["none", *names])


@dataclass
class PosthocSelection:
    """Which projection is fitted after training, how it is applied, and whether a run
    trains before its post-hoc method acts."""

    posthoc_only: bool = field(
        default=False,
        metadata={
            "help": "Train nothing: score the model (step 0), apply the post-hoc method "
            "(posthoc_method, self_debias), score again. The two points show before -> after."
        },
    )
    posthoc_method: str = field(
        default="none",
        metadata={
            "help": "'none', or a projection fitted once on sentences of the corpus (original "
            "text) after training: 'sentence_debias' (Liang et al. 2020), 'inlp' (Ravfogel "
            "et al. 2020) or 'leace' (Belrose et al. 2023)."
        },
    )
    posthoc_apply: str = field(
        default="fold",
        metadata={
            "help": "'fold': the projection folded into the MLM head's first layer (a plain "
            "checkpoint; only the head sees it); 'hook': a forward hook on the base model's "
            "output (debiased hidden states; the hook is not saved in the weights)."
        },
    )
    posthoc_word_pairs: str | None = field(
        default=None,
        metadata={
            "help": "Gender word pairs that choose the fit sentences: a bias-bench JSON "
            '({"gender": [[male, female], ...]}) or a CDS-format TSV; a bare name is a file '
            "shipped in cdsbias/resources/wordlists (pronoun_pairs.json). Default the bias "
            "axis's words (gender: the CDS pairs plus him/her, his/her); on another bias_axis "
            "an error (its words are the axis's)."
        },
    )
    posthoc_sentences_per_class: int = field(
        default=10_000,
        metadata={"help": "INLP/LEACE: fit sentences per class (bias-bench: 10,000)."},
    )
    posthoc_min_sentences_per_class: int = field(
        default=100,
        metadata={"help": "INLP/LEACE: fewer sentences in any class is an error."},
    )

    def __post_init__(self) -> None:
        names = selector_values("posthoc_method")
        if self.posthoc_method != "none" and self.posthoc_method not in names:
            raise unknown_name_error("posthoc_method", self.posthoc_method, ["none", *names])
        if self.posthoc_apply not in ("fold", "hook"):
            raise CdsbiasError(f"posthoc_apply must be fold or hook, got '{self.posthoc_apply}'.")
        if not 1 <= self.posthoc_min_sentences_per_class <= self.posthoc_sentences_per_class:
            raise CdsbiasError(
                "posthoc_min_sentences_per_class must be 1 to posthoc_sentences_per_class "
                f"({self.posthoc_sentences_per_class}), got {self.posthoc_min_sentences_per_class}."
            )


#: Keys of :class:`PosthocSelection` that shape a fitted projection, and the methods they
#: apply to (a key given without them is an error).
ERASURE_KEYS = {
    "posthoc_apply": ("sentence_debias", "inlp", "leace"),
    "posthoc_word_pairs": ("sentence_debias", "inlp", "leace"),
    "posthoc_sentences_per_class": ("inlp", "leace"),
    "posthoc_min_sentences_per_class": ("inlp", "leace"),
}
