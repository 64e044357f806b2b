"""AUL and AULA: sentence scores from one unmasked forward pass (Kaneko & Bollegala 2022).

Pseudo-log-likelihood scores (CrowS-Pairs' and StereoSet's) depend on which tokens are
masked. Kaneko & Bollegala ("Unmasking the Mask -- Evaluating Social Biases in Masked
Language Models", AAAI 2022) score a sentence ``S = w_0 .. w_{n-1}`` with *nothing* masked,
one forward pass::

    AUL(S)  = 1/(n-2) * sum_{i=1}^{n-2} ln P(w_i | S)
    AULA(S) = 1/(n-2) * sum_{i=1}^{n-2} a_i * ln P(w_i | S)
    a_j     = mean over layers l, heads h and query positions i (all n) of attn_{l,h}[i, j]

The choices of their code (``kanekomasahiro/evaluate_bias_in_mlm``, ``evaluate.py``,
``calculate_aul``), kept here:

* the sentence is encoded with the model's special tokens and positions ``1 .. n-2`` are
  scored: the first and the last token (``[CLS]``/``[SEP]``, ``<s>``/``</s>``) are left out
  of the mean, by position;
* AULA's weights are the self-attention probabilities of **every layer and every head**,
  averaged, then averaged over **all query positions** (special tokens included): ``a_j``
  is the mean attention token ``j`` *receives*. Its weights are taken at positions
  ``1 .. n-2`` without renormalising, and the weighted log-probabilities are *averaged*
  (divided by ``n-2``), not divided by the sum of the weights;
* scores are compared unrounded (``pro > anti``; a tie is not a stereotype preference).

Batched: distinct sentences run once, sorted by length; padding is masked out of attention,
and padded query rows are left out of ``a_j``, so each score equals the one-sentence pass.
Only the scored positions ``1 .. n-2`` go through the vocabulary projection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cdsbias.errors import CdsbiasError
from cdsbias.scoring.batching import capped_batches, max_batch_tokens, output_at

#: Sentence scorings of this module.
UNMASKED_SCORINGS = ("aul", "aula")
#: What they read (no masked position), for the benchmarks that refuse Self-Debias on them.
UNMASKED_READS = "every token of the unmasked sentences (Kaneko & Bollegala 2022)"


def unmasked_scores(scorer: Any, sequences: Sequence[Sequence[int]], scoring: str) -> np.ndarray:
    """AUL or AULA (see the module docstring) of each token sequence.

    Args:
        scorer: A :class:`~cdsbias.scoring.MaskedLMScorer` (its model, batch size, device).
        sequences: Token ids with the model's special tokens (``scorer.encode(text)``).
        scoring: ``"aul"`` or ``"aula"``.

    Returns:
        float64 scores, one per sequence; NaN for a sequence of two tokens or fewer.

    Raises:
        CdsbiasError: An unknown scoring, an input longer than the model takes, or
            ``aula`` on a model that returns no attention weights.
    """
    return unmasked_score_sets(scorer, sequences, (scoring,))[scoring]


def unmasked_score_sets(
    scorer: Any, sequences: Sequence[Sequence[int]], scorings: Sequence[str]
) -> dict[str, np.ndarray]:
    """Every scoring of ``scorings`` (``aul``, ``aula`` or both) from ONE pass per sentence.

    AULA's pass returns the attention weights with the logits, so AUL comes with it: both
    read the same log-probabilities, as in Kaneko & Bollegala's ``calculate_aul``. Alone,
    AUL runs the model's own attention kernel (SDPA, no weights); from the shared eager pass
    its scores differ from that run's by float rounding only (<= 1e-6 on the test models).

    Returns:
        ``{scoring: scores}`` as :func:`unmasked_scores` returns them.

    Raises:
        CdsbiasError: As :func:`unmasked_scores`.
    """
    import torch

    for scoring in scorings:
        if scoring not in UNMASKED_SCORINGS:
            raise CdsbiasError(f"Unknown scoring {scoring!r}; choose aul or aula.")
    attention = "aula" in scorings
    distinct = list(dict.fromkeys(tuple(s) for s in sequences))
    for sequence in distinct:
        scorer.check_length(len(sequence))
    scores = {scoring: np.full(len(distinct), np.nan) for scoring in scorings}
    order = sorted(range(len(distinct)), key=lambda i: len(distinct[i]))
    rows = [len(s) for s in distinct]
    # Only positions 1 .. n-2 are scored, so only they go through the vocabulary projection.
    read = [max(n - 2, 0) for n in rows]
    model = scorer.model
    batches = capped_batches(
        order, read, scorer.batch_size, scorer._vocab_size, rows, max_batch_tokens(model)
    )
    device = scorer.device
    restore = _eager_attention(model) if attention else None
    try:
        with torch.inference_mode():
            for batch in batches:
                width = max(rows[i] for i in batch)
                columns = max(1, max(read[i] for i in batch))
                input_ids = torch.full((len(batch), width), scorer.pad_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                gather = torch.zeros((len(batch), columns), dtype=torch.long)
                for row, index in enumerate(batch):
                    input_ids[row, : rows[index]] = torch.as_tensor(distinct[index])
                    mask[row, : rows[index]] = 1
                    gather[row, : read[index]] = torch.arange(1, read[index] + 1)
                output = output_at(
                    model, input_ids.to(device), mask.to(device), gather.to(device),
                    output_attentions=attention,
                )  # fmt: skip
                scorer.sequences_run += len(batch)
                # ln softmax at the token itself. log_softmax then gather, not logit minus
                # logsumexp: torch's CPU logsumexp is several times slower than its fused
                # log_softmax over a [rows, vocab] tensor.
                ids = torch.gather(input_ids, 1, gather).to(output.logits.device)
                log_probs = torch.log_softmax(output.logits.float(), dim=-1)
                token = log_probs.gather(2, ids.unsqueeze(-1))[..., 0].double().cpu()
                received = _received_attention(output, model) if attention else None
                for row, index in enumerate(batch):
                    n = rows[index]
                    if n <= 2:
                        continue
                    values = token[row, : n - 2]
                    if "aul" in scores:
                        scores["aul"][index] = float(values.mean())
                    if received is not None:
                        # Mean over the sentence's own query rows (padding rows left out).
                        weights = received[row, :n, :n].mean(dim=0)
                        scores["aula"][index] = float((values * weights[1 : n - 1]).mean())
    finally:
        if restore is not None:
            model.set_attn_implementation(restore)
    position = {sequence: i for i, sequence in enumerate(distinct)}
    where = [position[tuple(s)] for s in sequences]
    return {name: values[where] if sequences else np.empty(0) for name, values in scores.items()}


def _eager_attention(model: Any) -> str | None:
    """Switches ``model`` to eager attention (SDPA and flash kernels return no weights) and
    returns the implementation to restore, or None when it already is eager."""
    current = getattr(model.config, "_attn_implementation", None)
    if current in (None, "eager") or not hasattr(model, "set_attn_implementation"):
        return None
    try:
        model.set_attn_implementation("eager")
    except (ValueError, ImportError, NotImplementedError):
        return None  # _received_attention then names the fix
    return current


def _received_attention(output: Any, model: Any) -> Any:
    """``[batch, query, key]`` attention averaged over layers and heads, float64."""
    import torch

    layers = [a for a in (getattr(output, "attentions", None) or ()) if a is not None]
    if not layers:
        raise CdsbiasError(
            f"scoring: aula needs attention weights, but {type(model).__name__} returned none "
            f"(attention implementation {getattr(model.config, '_attn_implementation', '?')!r}); "
            "load the model with attn_implementation='eager', or use scoring: aul."
        )
    stacked = torch.stack([a.double() for a in layers])  # [layers, batch, heads, q, k]
    return stacked.mean(dim=(0, 2)).cpu()
