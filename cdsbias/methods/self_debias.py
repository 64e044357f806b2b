"""Self-Debias (Schick, Udupa & Schütze 2021, TACL) as a ``posthoc`` method: a decoding rule
applied when the run's post-hoc point is scored.

At every masked position the scorer reads, the model's distribution ``p`` is compared with
``q``, its distribution with a debiasing prefix inserted after the first special token, and

    p'(w) ∝ p(w) · max(exp(−λ · max(q(w) − p(w), 0)), ε)

with the prefix of the run's bias axis (``bias_axis``; bias-bench's prefix for gender,
race-color and religion, cdsbias.axes), λ = 50 and ε = 0.01 by default (the numerical core,
with the reference code's choices, is :mod:`cdsbias.scoring.self_debias`). Nothing trains
and the weights are untouched: the method costs a second forward pass per scored input and
the prefix's tokens in it (:meth:`SelfDebiasing.costs`, which ``cdsbias compare`` shows).

In a run, the points during training are scored plainly; the run's last point (after
training, or straight away with ``posthoc_only: true``) is scored under ``p'``, and every
point's held-out loss is read through the scorer (``debiased_mlm_loss``: under ``p'`` at
that last point), so before → after compares like with like. A benchmark that reads an
unmasked position is refused when the recipe is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import Method, register


@dataclass
class SelfDebiasOptions:
    """Options of Self-Debias (``self_debias: true``)."""

    self_debias: bool = field(
        default=False,
        metadata={
            "help": "Score the run's last point under Self-Debias (Schick et al. 2021): a "
            "decoding rule, nothing trains; with posthoc_only: true the model is scored "
            "before and after it."
        },
    )
    self_debias_prefix: str | None = field(
        default=None,
        metadata={
            "help": "The debiasing prefix (null: the bias axis's, bias-bench's for gender, "
            "race and religion; an axis of your own file has none: give one)."
        },
    )
    # The defaults are bias-bench's, as cdsbias.scoring.self_debias's DECAY_CONSTANT and
    # EPSILON (a method does not import the scorer; a test keeps the two equal).
    self_debias_lambda: float = field(
        default=50.0, metadata={"help": "λ, the decay constant (bias-bench: 50)."}
    )
    self_debias_epsilon: float = field(
        default=0.01, metadata={"help": "ε, the floor of the decay factor (bias-bench: 0.01)."}
    )

    def __post_init__(self) -> None:
        lam, eps = self.self_debias_lambda, self.self_debias_epsilon
        if not lam >= 0:
            raise CdsbiasError(f"self_debias_lambda must be 0 or more, got {lam}.")
        if not 0 < eps <= 1:
            raise CdsbiasError(f"self_debias_epsilon must be in (0, 1], got {eps}.")


@register
class SelfDebiasing(Method):
    name = "self_debiasing"
    role = "posthoc"
    title = "Self-Debias"
    description = (
        "a decoding rule at scoring time decayed the tokens a debiasing prefix makes "
        "likelier (Schick et al. 2021); the weights are unchanged"
    )
    Options = SelfDebiasOptions
    selected_by = "self_debias: true"
    example: ClassVar[dict[str, Any]] = {"self_debias": True}
    changes_scoring = True
    reads_axis = True
    citation = (
        "Schick, T., Udupa, S., & Schütze, H. (2021). Self-Diagnosis and Self-Debiasing: A "
        "Proposal for Reducing Corpus-Based Bias in NLP. Transactions of the Association for "
        "Computational Linguistics, 9, 1408-1424."
    )
    card_tags = ("self-debias",)

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        return bool(values.get("self_debias"))

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        #: Forward passes and extra tokens per prediction, once a scorer was wrapped.
        self.inference_cost: dict[str, int] | None = None

    def check_benchmarks(self, benchmarks: list[Any]) -> None:
        for benchmark in benchmarks:
            conflict = benchmark.self_debias_conflict()
            if conflict:
                raise CdsbiasError(f"self_debias: true cannot score {benchmark.name}: {conflict}.")

    @property
    def prefix(self) -> str:
        """The debiasing prefix: ``self_debias_prefix``, else the bias axis's.

        Raises:
            CdsbiasError: Neither is there (an axis of the user's file).
        """
        given = self.options.self_debias_prefix
        if given is not None:
            return given
        axis = self.bias_axis
        if axis.self_debias_prefix is None:
            raise CdsbiasError(
                f"self_debias: true needs a debiasing prefix, and the bias axis '{axis.name}' "
                f"({axis.source or 'a user axis'}) has none; give one, e.g. "
                f"self_debias_prefix='The following text discriminates against people because "
                f"of their {axis.name}: ' (bias-bench's wording)."
            )
        return axis.self_debias_prefix

    def check_axis(self) -> None:
        """An axis without a prefix needs ``self_debias_prefix`` (checked when the recipe is
        read, before anything is written)."""
        _ = self.prefix

    def wrap_scorer(self, scorer: Any) -> Any:
        """A copy of ``scorer`` that reads ``p'`` (same model, same batches) under
        :attr:`prefix`."""
        o = self.options
        wrapped = scorer.with_self_debias(self.prefix, o.self_debias_lambda, o.self_debias_epsilon)
        tokenizer = scorer.tokenizer
        first = tokenizer("x")["input_ids"][0]
        special = set(tokenizer.all_special_ids)
        self.inference_cost = wrapped.self_debias.inference_cost(
            tokenizer, first if first in special else None
        )
        return wrapped

    def costs(self, model: Any = None, tokenizer: Any = None) -> dict[str, str]:
        if self.inference_cost is None:
            return {}
        passes, extra = self.inference_cost["forward_passes"], self.inference_cost["extra_tokens"]
        return {
            "inference cost": f"{passes} forward pass{'es' if passes > 1 else ''}, "
            f"+{extra} tokens per prediction"
        }

    def label(self, model: Any = None) -> str:
        o = self.options
        return f"Self-Debias (lambda {o.self_debias_lambda:g}, epsilon {o.self_debias_epsilon:g})"

    def card_text(self) -> str:
        o = self.options
        prefix = (
            f"bias-bench's {self.bias_axis.name} prefix"
            if o.self_debias_prefix is None
            else f"the prefix {o.self_debias_prefix.strip()!r}"
        )
        return (
            "the reported scores after it were read under Self-Debias (Schick et al. 2021), a "
            f"decoding rule with {prefix}, lambda {o.self_debias_lambda:g} and epsilon "
            f"{o.self_debias_epsilon:g}; the weights are the model's own, so score it the same "
            "way with `cdsbias evaluate MODEL --self-debias`"
        )
