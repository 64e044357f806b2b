"""Functions that read scores other than a single target out of the shared scorer.

:meth:`MaskedLMScorer.token_log_probs` returns one log-probability per request; the
functions here read more from the same batched, deduplicated passes:

* :func:`top_k_at`: the ``k`` most probable tokens at masked positions.
  :meth:`MaskedLMScorer.vocab_log_probs` returns whole vocabulary distributions, which is
  fine for a handful of rows but not for a benchmark of a few thousand sentences (1,348
  DaWinoBias rows x 30k-100k vocabulary entries); :func:`top_k_at` keeps only the ``k``
  best tokens of each row while the scorer streams batches, so memory stays small and every
  input is still deduplicated and run once.
* :func:`log_probs_and_top_k`: target log-probabilities *and* top-k tokens in one pass.
* :func:`chain_rule_requests`: the per-piece requests of a multi-piece target's chain-rule
  score.
* :func:`sequence_log_probs`: ``ln P(target_i | input)`` at *every* requested position of
  unmasked or partly masked inputs.
* :func:`decode_token`: one vocabulary entry as readable text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from cdsbias.scoring.encoding import EncodedTarget
    from cdsbias.scoring.scorer import MaskedLMScorer


def top_k_at(
    scorer: MaskedLMScorer,
    inputs: Sequence[Sequence[int]],
    positions: Sequence[int],
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` most probable tokens at ``positions[i]`` of ``inputs[i]``.

    Args:
        scorer: The shared scorer (batching, deduplication, projection at read positions).
        inputs: Token ids with special tokens, one sequence per request.
        positions: The position to read in each input.
        k: How many tokens to keep per request (capped at the vocabulary size).

    Returns:
        ``(ids, log_probs)``: int64 and float64 arrays of shape ``[len(inputs), k]``,
        best first; ``log_probs`` are natural-log probabilities over the full vocabulary.
    """
    import torch

    ids_out: np.ndarray | None = None
    lp_out: np.ndarray | None = None
    for request_rows, log_probs in scorer._log_softmax_at(inputs, positions):
        width = min(k, log_probs.shape[-1])
        if ids_out is None or lp_out is None:
            ids_out = np.zeros((len(inputs), width), dtype=np.int64)
            lp_out = np.zeros((len(inputs), width), dtype=np.float64)
        values, indices = torch.topk(log_probs, width, dim=-1)
        values_np = values.double().cpu().numpy()
        indices_np = indices.cpu().numpy()
        for row_index, requests in enumerate(request_rows):
            ids_out[requests] = indices_np[row_index]
            lp_out[requests] = values_np[row_index]
    if ids_out is None or lp_out is None:
        return np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0), dtype=np.float64)
    return ids_out, lp_out


def decode_token(tokenizer: object, token_id: int) -> str:
    """One vocabulary entry as readable text: ``"Ġhe"`` -> ``"he"``, ``"▁hun"`` -> ``"hun"``.

    Decoding the single id (rather than joining the characters of its string, or printing
    the raw piece) handles byte-level BPE, SentencePiece and WordPiece alike; a WordPiece
    continuation keeps its ``##`` so it is recognisable as a word fragment.
    """
    return tokenizer.decode([int(token_id)]).strip()  # type: ignore[attr-defined]


def log_probs_and_top_k(
    scorer: MaskedLMScorer,
    inputs: Sequence[Sequence[int]],
    positions: Sequence[int],
    target_ids: Sequence[int],
    k: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Target log-probabilities *and* top-k tokens in one deduplicated pass.

    Benchmarks that need both (the pronoun's probability and the model's unrestricted
    top-1 guess at the same mask) would otherwise run every input twice.

    Args:
        scorer: The shared scorer.
        inputs: Token ids with special tokens, one sequence per request.
        positions: The position to read in each input.
        target_ids: The token whose log-probability to return per request; ``-1`` for none.
        k: Top-k size (``0`` skips the top-k).

    Returns:
        ``(target_log_probs [N], top_ids [N, k], top_log_probs [N, k])``; a request without
        a target gets NaN.
    """
    import torch

    n = len(inputs)
    if len(target_ids) != n:
        raise ValueError(f"{n} inputs but {len(target_ids)} target ids.")
    targets = np.full(n, np.nan, dtype=np.float64)
    top_ids = np.zeros((n, k), dtype=np.int64)
    top_lps = np.full((n, k), np.nan, dtype=np.float64)
    wanted = torch.as_tensor(list(target_ids), dtype=torch.long)
    for request_rows, log_probs in scorer._log_softmax_at(inputs, positions):
        width = min(k, log_probs.shape[-1])
        if width:
            values, indices = torch.topk(log_probs, width, dim=-1)
            values_np = values.double().cpu().numpy()
            indices_np = indices.cpu().numpy()
        for row_index, requests in enumerate(request_rows):
            index = torch.as_tensor(requests, dtype=torch.long)
            ids = wanted[index]
            has = ids >= 0
            if bool(has.any()):
                chosen = index[has].numpy()
                targets[chosen] = log_probs[row_index, ids[has]].double().cpu().numpy()
            if width:
                top_ids[requests, :width] = indices_np[row_index]
                top_lps[requests, :width] = values_np[row_index]
    return targets, top_ids, top_lps


def chain_rule_requests(
    encoded: EncodedTarget,
) -> tuple[list[tuple[int, ...]], list[int], list[int]]:
    """The per-piece requests whose log-probabilities sum to the target's chain-rule score.

    Mirrors :meth:`MaskedLMScorer.encoded_log_probs`: piece ``i`` is read with pieces
    ``< i`` shown and pieces ``>= i`` masked.
    """
    inputs: list[tuple[int, ...]] = []
    positions: list[int] = []
    target_ids: list[int] = []
    ids = list(encoded.input_ids)
    for position, token in zip(encoded.positions, encoded.target_ids, strict=True):
        inputs.append(tuple(ids))
        positions.append(position)
        target_ids.append(token)
        ids[position] = token
    return inputs, positions, target_ids


def sequence_log_probs(
    scorer: MaskedLMScorer,
    inputs: Sequence[Sequence[int]],
    targets: Sequence[Sequence[int]],
    positions: Sequence[Sequence[int]] | None = None,
) -> list[np.ndarray]:
    """``ln softmax(f(inputs[i]))[p, targets[i][p]]`` at each position ``p`` of each input.

    The input is run as given (nothing is masked here), which is what GenDa Lens' ABC
    "perplexity" needs: the labels (``targets``) may differ from the input tokens.

    Args:
        scorer: The shared scorer (batching, deduplication, projection at read positions).
        inputs: Token ids including special tokens.
        targets: Label ids aligned with each input (same length).
        positions: Positions to read per input; default: every position.

    Returns:
        One float64 array per input, aligned with its positions.
    """
    if len(inputs) != len(targets):
        raise ValueError(f"{len(inputs)} inputs but {len(targets)} label sequences")
    chosen: list[list[int]] = []
    for index, (ids, labels) in enumerate(zip(inputs, targets, strict=True)):
        if len(labels) != len(ids):
            raise ValueError(f"input {index} has {len(ids)} tokens but {len(labels)} labels")
        chosen.append(
            list(range(len(ids))) if positions is None else [int(p) for p in positions[index]]
        )
    # Identical (input, position) pairs are run once, and batches are capped by read rows
    # x vocabulary, inside the scorer.
    flat_inputs: list[tuple[int, ...]] = []
    for ids, read in zip(inputs, chosen, strict=True):
        flat_inputs.extend([tuple(ids)] * len(read))
    flat_positions = [p for read in chosen for p in read]
    flat_targets = [
        int(labels[p]) for labels, read in zip(targets, chosen, strict=True) for p in read
    ]
    scores = scorer.token_log_probs(flat_inputs, flat_positions, flat_targets)
    sizes = [len(read) for read in chosen]
    return list(np.split(scores, np.cumsum(sizes)[:-1])) if sizes else []
