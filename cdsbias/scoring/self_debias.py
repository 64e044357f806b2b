"""Self-Debias as a scoring mode of the masked-LM scorer.

Schick, Udupa & Schütze (2021), "Self-Diagnosis and Self-Debiasing: A Proposal for Reducing
Corpus-Based Bias in NLP" (TACL). At every position that is read, the model's distribution
``p`` (plain input) is compared with ``q``, its distribution at the same position of a
second input where a *debiasing prefix* describing the bias ("The following text
discriminates against people because of their gender: ") is inserted after the first special
token. Tokens the prefix makes *more* likely are decayed::

    p'(w) ∝ p(w) · max(exp(−λ · max(q(w) − p(w), 0)), ε)

with λ = 50 and ε = 0.01, the constants of the authors' code and of bias-bench
(McGill-NLP/bias-bench, ``bias_bench/debias/self_debias/generation.py``,
``SelfDebiasingLogitsProcessor``). The method trains nothing; it costs a second forward pass
per input and the prefix's tokens in it.

How bias-bench runs it on a masked LM (``MaskedLMWrapper.get_token_logits_self_debiasing``),
and what is kept here:

* The prefix is tokenized as ``"[CLS] " + prefix`` without special tokens and the leading
  ``[CLS]`` dropped, then placed between the input's first token and the rest. Kept (see
  :meth:`SelfDebias.prefix_ids`): for WordPiece this equals tokenizing the prefix alone; for
  byte-level BPE the first word gets its space marker (``ĠThe``) and the prefix's trailing
  space becomes a lone ``Ġ`` token, as in bias-bench.
* Position ids count from the first real token in both inputs (bias-bench left-pads the
  prefixes and rebuilds the position ids to this end); here inputs are right-padded, so the
  model's default position ids are the same thing.
* bias-bench accepts several prefixes and takes ``q`` as their element-wise maximum; its
  benchmarks pass one prefix per bias type, and so does cdsbias (one prefix, one extra pass).
* bias-bench only scores sentences with a single mask; here every read of the scorer gets
  the decay (target log-probabilities, top-k, the chain rule of multi-piece words,
  pseudo-log-likelihood), each read position in its own input, as bias-bench does per mask.

Reads must be at masked positions: the decay compares two predictions of a hidden token, so
a score read at a visible token (ABC's GenDa Lens "perplexity") is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cdsbias.axes.gender import PREFIX as GENDER_PREFIX
from cdsbias.errors import CdsbiasError

#: bias-bench's prefix for gender (``DEBIASING_PREFIXES["gender"]`` in its CrowS-Pairs and
#: StereoSet runners), trailing space included: the gender axis's (cdsbias.axes.gender),
#: the default of a scorer given no prefix. Each axis has its own
#: (``BiasAxis.self_debias_prefix``).
__all__ = ["DECAY_CONSTANT", "EPSILON", "GENDER_PREFIX", "SelfDebias"]

#: λ, the decay constant of the paper and of bias-bench.
DECAY_CONSTANT = 50.0

#: ε, the smallest factor a probability is multiplied by.
EPSILON = 0.01


@dataclass(frozen=True)
class SelfDebias:
    """Self-Debias settings handed to :class:`~cdsbias.scoring.MaskedLMScorer`.

    Attributes:
        prefix: The debiasing prefix (default: bias-bench's gender prefix). An empty prefix
            turns the mode off: scores are exactly the plain ones.
        decay_constant: λ (default 50). ``0`` turns the mode off as well.
        epsilon: ε (default 0.01), the floor of the decay factor, in (0, 1].
    """

    prefix: str = GENDER_PREFIX
    decay_constant: float = DECAY_CONSTANT
    epsilon: float = EPSILON

    def __post_init__(self) -> None:
        if not self.decay_constant >= 0:
            raise CdsbiasError(
                f"Self-Debias decay constant (lambda) must be >= 0, got {self.decay_constant}."
            )
        if not 0 < self.epsilon <= 1:
            raise CdsbiasError(f"Self-Debias epsilon must be in (0, 1], got {self.epsilon}.")

    @property
    def is_identity(self) -> bool:
        """True when the mode changes nothing (empty prefix or λ = 0); the scorer then runs
        no second pass, so scores are bit-for-bit the plain ones."""
        return not self.prefix.strip() or self.decay_constant == 0

    def settings(self) -> dict[str, Any]:
        """What a result records so that it is never mistaken for a plain one."""
        return {
            "prefix": self.prefix,
            "decay_constant": self.decay_constant,
            "epsilon": self.epsilon,
        }

    def label(self) -> str:
        """One line for a ``rows.tsv`` column or a table cell."""
        return f"prefix={self.prefix!r} lambda={self.decay_constant:g} epsilon={self.epsilon:g}"

    def prefix_ids(self, tokenizer: Any, first_id: int | None) -> tuple[int, ...]:
        """Token ids of the prefix as it is inserted after the special token ``first_id``.

        As bias-bench: ``first_token + " " + prefix`` tokenized without special tokens, the
        leading special token dropped (``first_id`` None: the prefix alone).
        """
        if self.is_identity:
            ids: list[int] = []
        elif first_id is None:
            ids = list(tokenizer(self.prefix, add_special_tokens=False)["input_ids"])
        else:
            first = tokenizer.convert_ids_to_tokens([int(first_id)])[0]
            ids = list(tokenizer(f"{first} {self.prefix}", add_special_tokens=False)["input_ids"])
            if ids[:1] == [int(first_id)]:
                ids = ids[1:]
            else:  # the special token was not recognised in text: the prefix alone
                ids = list(tokenizer(self.prefix, add_special_tokens=False)["input_ids"])
        return tuple(ids)

    def inference_cost(self, tokenizer: Any, first_id: int | None) -> dict[str, int]:
        """Forward passes and extra input tokens per prediction (per scored input)."""
        extra = len(self.prefix_ids(tokenizer, first_id))
        return {"forward_passes": 2 if extra else 1, "extra_tokens": extra}


def debias_log_probs(log_p: Any, log_q: Any, decay_constant: float, epsilon: float) -> Any:
    """``ln p'`` from ``ln p`` (plain) and ``ln q`` (prefixed), over the last dimension.

    ``p' ∝ p · max(exp(−λ · max(q − p, 0)), ε)``, computed in log space:
    ``ln p' = ln p + max(−λ · max(q − p, 0), ln ε) − logsumexp(...)``.

    Args:
        log_p: ``[..., vocab]`` natural-log probabilities of the plain input.
        log_q: The same shape, of the prefixed input.
        decay_constant: λ.
        epsilon: ε.

    Returns:
        A tensor like ``log_p`` that is a log-distribution over the last dimension.
    """
    import math

    import torch

    # One [rows, vocab] buffer, updated in place, and log_softmax (x - logsumexp(x), fused)
    # for the renormalisation: torch's CPU logsumexp is several times slower, and at
    # BERT's 30k vocabulary these element-wise passes cost as much as the forward pass.
    log_factor = log_q.exp()
    log_factor -= log_p.exp()
    log_factor.clamp_(min=0.0).mul_(-decay_constant).clamp_(min=math.log(epsilon))
    log_factor += log_p
    return torch.log_softmax(log_factor, dim=-1)


def prefixed_inputs(
    scorer: Any, sequences: Sequence[Sequence[int]], positions: Sequence[Sequence[int]]
) -> tuple[list[tuple[int, ...]], list[list[int]]]:
    """The prefixed partner of each input and where its read positions moved to.

    The prefix goes after the first token when that is a special token (``[CLS]``, ``<s>``),
    else in front; positions at or after the insertion point shift by its length.

    Raises:
        CdsbiasError: A read position that is not masked, or a prefixed input longer than
            the model accepts.
    """
    settings = scorer.self_debias
    assert settings is not None
    out: list[tuple[int, ...]] = []
    moved: list[list[int]] = []
    prefixes: dict[int | None, tuple[int, ...]] = {}  # by the special token it follows
    for ids, read in zip(sequences, positions, strict=True):
        for p in read:
            if ids[p] != scorer.mask_id:
                raise CdsbiasError(
                    "Self-Debias reads masked positions only, but a score was asked at the "
                    f"unmasked position {p}; use a benchmark (or option) that scores masked "
                    "tokens, e.g. ABC with --option scoring=pll."
                )
        at = 1 if ids and ids[0] in scorer._frame_ids else 0
        first = ids[0] if at else None
        if first not in prefixes:
            prefixes[first] = settings.prefix_ids(scorer.tokenizer, first)
        prefix = prefixes[first]
        scorer.check_length(
            len(ids) + len(prefix), f"An input with the Self-Debias prefix ({len(prefix)} tokens)"
        )
        out.append((*ids[:at], *prefix, *ids[at:]))
        moved.append([p + len(prefix) if p >= at else p for p in read])
    return out, moved


def debiased_mlm_loss(
    scorer: Any, input_ids: Sequence[Sequence[int]], labels: Sequence[Sequence[int]]
) -> float:
    """Held-out masked-LM loss under the scorer's distribution: mean ``−ln p(true token)``
    over the masked positions (labels ``!= -100``, the transformers convention).

    With Self-Debias on, ``p`` is ``p'``; with it off, this is the usual MLM loss of the
    given masks (the same number ``Trainer`` reports, up to float precision).

    Args:
        scorer: A :class:`~cdsbias.scoring.MaskedLMScorer`, with or without Self-Debias.
        input_ids: Masked inputs, special tokens included, unpadded.
        labels: Per input, the true token at masked positions and ``-100`` elsewhere.

    Returns:
        The mean negative log-likelihood in nats (NaN when nothing is masked).
    """
    import numpy as np

    inputs: list[tuple[int, ...]] = []
    read: list[int] = []
    targets: list[int] = []
    for ids, row in zip(input_ids, labels, strict=True):
        ids = [int(t) for t in ids]
        row = [int(t) for t in row]
        if len(ids) != len(row):
            raise CdsbiasError(f"An input of {len(ids)} tokens has {len(row)} labels.")
        for position, label in enumerate(row):
            if label != -100:
                inputs.append(tuple(ids))
                read.append(position)
                targets.append(label)
    if not inputs:
        return float("nan")
    return float(-np.mean(scorer.token_log_probs(inputs, read, targets)))
