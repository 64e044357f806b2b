"""How the scorer's forward passes stay cheap: capped batches, projection at read rows only.

:class:`~cdsbias.scoring.MaskedLMScorer` runs distinct inputs sorted by length in batches
that :func:`capped_batches` cuts so that a batch's ``ln softmax`` (read rows x vocabulary)
and its activations (padded tokens x feed-forward width, :func:`max_batch_tokens`) stay
small, and :func:`logits_at` applies the vocabulary projection (the largest matrix of
a BERT-base) only at the positions that are read, not at every position of every sequence.
AUL/AULA (:mod:`cdsbias.scoring.unmasked`) batch the same way (:func:`output_at`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

#: Cap on read rows x vocabulary entries per forward batch. A batch's log-softmax is
#: ``[read rows, vocab]``: reading every position of 64 inputs (PLL, ABC) under XLM-R's
#: 250k vocabulary would be ~1 GB, copied several times; 2^23 float32 entries are 32 MB.
MAX_BATCH_ENTRIES = 1 << 23


#: Cap on padded tokens x feed-forward width per forward batch: the largest activation of
#: a transformer layer, ``[tokens, intermediate]``, stays at 2^20 float32 entries (4 MB), in
#: cache. Larger batches gain nothing in the matrix products (their rate levels off at a few
#: hundred rows on CPU) and lose in every memory-bound step (GELU, layer norm, softmax,
#: copies): measured with a 12 x 768 BERT on this project's 2-core machine, GAP's Wikipedia
#: sentences (mean 28 tokens) encoded 2.8x faster at 256 tokens a batch than at 64 rows.
MAX_BATCH_ACTIVATIONS = 1 << 20


def max_batch_tokens(model: Any) -> int:
    """Padded tokens per forward batch for ``model`` (:data:`MAX_BATCH_ACTIVATIONS` over its
    feed-forward width: 341 for BERT-base, 2,048 for a 128-wide model)."""
    config = model.config
    width = (
        getattr(config, "intermediate_size", None)  # BERT, RoBERTa, DeBERTa, XLM-R
        or getattr(config, "hidden_dim", None)  # DistilBERT
        or 4 * int(getattr(config, "hidden_size", 768))
    )
    return max(1, MAX_BATCH_ACTIVATIONS // int(width))


def capped_batches(
    order: Sequence[int],
    read_rows: Sequence[int],
    size: int,
    vocab: int,
    lengths: Sequence[int] | None = None,
    max_tokens: int | None = None,
) -> Iterator[list[int]]:
    """Consecutive runs of ``order`` of at most ``size`` items and, unless a run is a single
    item, at most ``MAX_BATCH_ENTRIES`` read rows x vocabulary entries and (given
    ``lengths`` and ``max_tokens``) at most ``max_tokens`` padded tokens (items x the longest
    item's length)."""
    batch: list[int] = []
    rows = 0
    width = 0
    for index in order:
        length = lengths[index] if lengths is not None else 0
        if batch and (
            len(batch) == size
            or (rows + read_rows[index]) * vocab > MAX_BATCH_ENTRIES
            or (max_tokens is not None and (len(batch) + 1) * max(width, length) > max_tokens)
        ):
            yield batch
            batch, rows, width = [], 0, 0
        batch.append(index)
        rows += read_rows[index]
        width = max(width, length)
    if batch:
        yield batch


def logits_at(model: Any, input_ids: Any, attention: Any, gather: Any) -> Any:
    """Logits ``[batch, columns, vocab]`` of ``model`` at the positions in ``gather``
    (:func:`output_at`'s ``logits``)."""
    return output_at(model, input_ids, attention, gather).logits


def output_at(model: Any, input_ids: Any, attention: Any, gather: Any, **forward: Any) -> Any:
    """The output of ``model`` with its ``logits`` ``[batch, columns, vocab]`` at the
    positions in ``gather`` only.

    A forward hook on the encoder replaces its hidden states by the gathered ones, so
    whatever head the architecture has (BERT's ``cls``, RoBERTa's ``lm_head``,
    DistilBERT's ``vocab_*`` layers, ...) runs position-wise on those rows only. The
    tensors must already be on the model's device; ``forward`` goes to the model's call
    (e.g. ``output_attentions=True``).
    """
    import torch

    hooked = []

    def select_rows(_module: Any, _args: Any, output: Any) -> Any:
        hidden = output[0]
        index = gather.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
        picked = torch.gather(hidden, 1, index)
        hooked.append(True)
        if isinstance(output, tuple):
            return (picked, *output[1:])
        output.last_hidden_state = picked
        return output

    handle = model.base_model.register_forward_hook(select_rows)
    try:
        output = model(input_ids=input_ids, attention_mask=attention, **forward)
    finally:
        handle.remove()
    if not hooked or output.logits.shape[1] != gather.shape[1]:
        # The head did not consume the hooked output (an unusual architecture):
        # project every position and gather afterwards; slower, same numbers.
        output = model(input_ids=input_ids, attention_mask=attention, **forward)
        index = gather.unsqueeze(-1).expand(-1, -1, output.logits.shape[-1])
        output.logits = torch.gather(output.logits, 1, index)
    return output
