"""Context-Debias (Kaneko & Bollegala 2021, EACL) as a ``loss`` method of a training run.

    loss = mlm_weight · L_MLM + α · L_debias + β · L_preserve

``L_debias`` pushes the hidden states of stereotype words (the BEC-Pro professions) to be
orthogonal to the attribute vectors ``v_i(a)`` (the mean state of each group's words of the
run's bias axis at layer ``i``: male and female for gender, three classes for race or
religion); ``L_preserve`` keeps the states of attribute sentences where the
original model had them. The numerical core, with the formulas, the reference code's
choices and the deliberate deviations, is :mod:`cdsbias.methods.context_debias_loss`; the
example sentences are chosen from the run's training corpus (original text, split into
sentences) by :mod:`cdsbias.methods.context_debias_data`.

Defaults are the authors' (``kanekomasahiro/context-debias``, ``script/debias.sh``):
α = 0.2, β = 0.8, every layer, token level, no MLM term (``mlm_weight`` 0: their objective
is the two terms only; a positive weight keeps the Trainer's MLM loss on the CDS batches).

The original states: with LoRA or the bottleneck adapter, the same model with the adapter
switched off (no second copy); with full or partial fine-tuning, a frozen copy of the model,
whose memory the run prints. A resumed full-weights run, whose model holds the checkpoint's
weights, loads the original model again (``model_name_or_path``) for the frozen copy and the
attribute vectors, so its terms are those of the uninterrupted run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import Method, register
from cdsbias.methods.context_debias_loss import LAYERS, LEVELS, ContextDebiasLoss


@dataclass
class ContextDebiasOptions:
    """Options of Context-Debias (``debias_loss: context_debias``)."""

    context_debias_alpha: float = field(
        default=0.2, metadata={"help": "α, weight of the debiasing term (theirs: 0.2)."}
    )
    context_debias_beta: float = field(
        default=0.8, metadata={"help": "β, weight of the preservation term (theirs: 0.8)."}
    )
    context_debias_layers: str = field(
        default="all",
        metadata={"help": "Layers of the debiasing term: all (theirs), first or last."},
    )
    context_debias_level: str = field(
        default="token",
        metadata={"help": "token (the stereotype word's state, theirs) or sentence."},
    )
    context_debias_mlm_weight: float = field(
        default=0.0,
        metadata={"help": "Weight of the MLM loss on the training batches (theirs: 0, none)."},
    )
    context_debias_attribute_words: list[str] | None = field(
        default=None,
        metadata={
            "help": "One word file per attribute class (one word a line), e.g. "
            "[male.txt, female.txt]; a bare name is a list shipped in "
            "cdsbias/resources/wordlists (pronouns_male.txt, pronouns_female.txt); default "
            "the bias axis's words, one class per group (gender: the project's gendered "
            "word pairs)."
        },
    )
    context_debias_stereotype_words: str | None = field(
        default=None,
        metadata={"help": "Word file of the stereotype words; default the BEC-Pro professions."},
    )
    context_debias_batch_size: int = field(
        default=32, metadata={"help": "Sentences per batch of each term (theirs: 32)."}
    )
    context_debias_max_sentences: int | None = field(
        default=None,
        metadata={"help": "Cap on the sentences kept per kind (null: all the corpus has)."},
    )

    def __post_init__(self) -> None:
        if self.context_debias_layers not in LAYERS:
            raise CdsbiasError(
                f"context_debias_layers must be one of {', '.join(LAYERS)}, got "
                f"'{self.context_debias_layers}'."
            )
        if self.context_debias_level not in LEVELS:
            raise CdsbiasError(
                f"context_debias_level must be one of {', '.join(LEVELS)}, got "
                f"'{self.context_debias_level}'."
            )
        for key in ("alpha", "beta", "mlm_weight"):
            value = getattr(self, f"context_debias_{key}")
            if not value >= 0:
                raise CdsbiasError(f"context_debias_{key} must be 0 or more, got {value}.")
        if self.context_debias_batch_size < 1:
            size = self.context_debias_batch_size
            raise CdsbiasError(f"context_debias_batch_size must be 1 or more, got {size}.")
        cap = self.context_debias_max_sentences
        if cap is not None and cap < 1:
            raise CdsbiasError(f"context_debias_max_sentences must be 1 or more, got {cap}.")
        files = self.context_debias_attribute_words
        if files is not None and len(files) < 2:
            raise CdsbiasError(
                "context_debias_attribute_words needs one file per class (two or more), got "
                f"{files}."
            )


def word_file(name: str) -> Path:
    """A word file: the path given, or a list of that name shipped with cdsbias."""
    from cdsbias.resources import resource_path

    path = Path(name)
    shipped = resource_path("wordlists", name)
    return shipped if not path.exists() and Path(name).name == name and shipped.is_file() else path


def corpus_sentences(documents: Iterable[str]) -> Iterator[str]:
    """The sentences of the documents, in order (Context-Debias reads sentence lines)."""
    from cdsbias.data.sentences import split_sentences

    for document in documents:
        for line in str(document).splitlines():
            yield from split_sentences(line)


@register
class ContextDebias(Method):
    name = "context_debias"
    role = "loss"
    reads_axis = True
    title = "Context-Debias"
    description = (
        "a loss term made the hidden states of stereotype words orthogonal to the bias axis's "
        "attribute vectors while keeping attribute sentences' states (Kaneko & Bollegala 2021)"
    )
    Options = ContextDebiasOptions
    selected_by = "debias_loss: context_debias"
    # The smoke corpus names every person with a gendered noun: with the pronouns as the
    # attribute classes, its pronoun-free sentences are stereotype sentences.
    example: ClassVar[dict[str, Any]] = {
        "debias_loss": "context_debias", "context_debias_batch_size": 4,
        "context_debias_max_sentences": 16,
        "context_debias_attribute_words": ["pronouns_male.txt", "pronouns_female.txt"],
    }  # fmt: skip
    citation = (
        "Kaneko, M., & Bollegala, D. (2021). Debiasing Pre-trained Contextualised Embeddings. "
        "EACL 2021."
    )
    card_tags = ("context-debias",)

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        self.loss: ContextDebiasLoss | None = None

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        return values.get("debias_loss") == cls.name

    def build_loss(self, *, seed: int = 42) -> ContextDebiasLoss:
        """The numerical core with this run's options (word files read now)."""
        from cdsbias.methods.context_debias_data import axis_attribute_words, read_word_file

        o = self.options
        attribute, stereotype = o.context_debias_attribute_words, o.context_debias_stereotype_words
        classes = (
            [read_word_file(word_file(f)) for f in attribute]
            if attribute
            else axis_attribute_words(self.bias_axis)
        )
        return ContextDebiasLoss(
            alpha=o.context_debias_alpha, beta=o.context_debias_beta,
            layers=o.context_debias_layers, level=o.context_debias_level,
            mlm_weight=o.context_debias_mlm_weight,
            attribute_words=classes,
            stereotype_words=read_word_file(word_file(stereotype)) if stereotype else None,
            batch_size=o.context_debias_batch_size,
            max_per_kind=o.context_debias_max_sentences, seed=seed,
        )  # fmt: skip

    def prepare_data(
        self,
        documents: Any,
        tokenizer: Any,
        model: Any,
        *,
        max_length: int | None = None,
        original: Any = None,
    ) -> str | None:
        """Chooses the example sentences from the corpus, computes the attribute vectors and
        sets up the original states; returns the frozen copy's memory when one is made.
        ``original()`` loads the run's original model when ``model`` is not it (a resumed
        full-weights run); an adapter switched off needs no copy and never calls it."""
        self.loss = self.build_loss().prepare(
            model, tokenizer, corpus_sentences(documents), max_length=max_length,
            original=original,
        )  # fmt: skip
        counts = self.loss.examples.counts()
        if self.loss.original_bytes:
            size = self.loss.original_bytes / 2**20
            return (
                f"Context-Debias sentences: {counts}; a frozen copy of the original model "
                f"gives the preservation term's states: {size:.1f} MB"
            )
        return f"Context-Debias sentences: {counts}; original states: the adapter switched off"

    def loss_terms(self, model: Any, inputs: Mapping[str, Any], outputs: Any) -> dict[str, Any]:
        if self.loss is None:
            raise CdsbiasError("Context-Debias: prepare_data() must read the corpus first.")
        return self.loss.loss_terms(model)

    def mlm_weight(self) -> float:
        return float(self.options.context_debias_mlm_weight)

    def label(self, model: Any = None) -> str:
        o = self.options
        return (
            f"Context-Debias (alpha {o.context_debias_alpha:g}, beta {o.context_debias_beta:g}, "
            f"{o.context_debias_layers} layers, {o.context_debias_level})"
        )

    def card_text(self) -> str:
        o = self.options
        mlm = (
            f", plus the MLM loss with weight {o.context_debias_mlm_weight:g}"
            if o.context_debias_mlm_weight
            else ", without an MLM term"
        )
        return (
            "the model was trained with Context-Debias (Kaneko & Bollegala 2021): the "
            "hidden states of stereotype words were made orthogonal to the attribute vectors "
            f"of the {self.bias_axis.name} axis's groups "
            f"({', '.join(self.bias_axis.groups)}; {o.context_debias_layers} layers, "
            f"{o.context_debias_level} level, "
            f"weight {o.context_debias_alpha:g}) while the states of attribute sentences were "
            f"kept close to the original model's (weight {o.context_debias_beta:g}){mlm}"
        )
