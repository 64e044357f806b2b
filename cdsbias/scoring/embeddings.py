"""Sentence encodings from a masked LM's encoder, batched but equal to one sentence at a time.

SEAT (May et al., NAACL 2019) and other embedding-based measures read a sentence's vector
from the encoder under a masked-LM head. The protocol of bias-bench (Meade et al. 2022,
``bias_bench/benchmark/seat/seat.py``) is: tokenize one sentence with the model's special
tokens, run the encoder (``AutoModel``, i.e. no LM head), take the *last* hidden layer and
average it over *all* tokens, ``[CLS]``/``[SEP]`` (or ``<s>``/``</s>``) included, then
L2-normalise (as May et al. do). One sentence per forward pass means no padding ever enters
the mean. A model that carries a post-hoc map (SentenceDebias, INLP, LEACE) is read through
it whether the map was folded into the MLM head or hooked onto the encoder
(:func:`cdsbias.methods.head_fold.through_map`), as bias-bench reads its debiased encoders;
:func:`encoded_representation` says which states were read.

:func:`encode_sentences` computes the same numbers fast: distinct sentences only, sorted by
length and batched (by rows and by padded tokens, :mod:`cdsbias.scoring.batching`), with
the padding masked out of attention *and* out of the mean, so each
row equals the one-sentence-at-a-time encoding (to float32 rounding, ~1e-7).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cdsbias.errors import CdsbiasError
from cdsbias.methods.head_fold import representation, through_map
from cdsbias.scoring.batching import capped_batches, max_batch_tokens
from cdsbias.scoring.encoding import shorten

#: Ways a sentence's token vectors become one vector.
POOLINGS = ("mean", "cls")


def check_layer(model: Any, layer: int) -> None:
    """Refuses a hidden-states index the model does not have (``-1``: the last layer).

    Raises:
        CdsbiasError: ``layer`` outside ``-(n+1)..n`` for a model of ``n`` layers.
    """
    n_layers = getattr(model.config, "num_hidden_layers", None)
    if layer != -1 and n_layers is not None and not -(n_layers + 1) <= layer <= n_layers:
        raise CdsbiasError(
            f"layer {layer} does not exist: the model has hidden states 0..{n_layers} "
            f"(0 = embeddings, -1 = last layer)."
        )


def encode_sentences(
    scorer: Any,
    sentences: Sequence[str],
    *,
    pooling: str = "mean",
    normalize: bool = False,
    layer: int = -1,
) -> np.ndarray:
    """One vector per sentence from the encoder of ``scorer.model``.

    Args:
        scorer: A :class:`~cdsbias.scoring.MaskedLMScorer`: its model's encoder
            (``model.base_model``, the LM head is not run), tokenizer, device and batch size.
        sentences: Plain sentences (no mask placeholders are replaced); duplicates are
            encoded once.
        pooling: ``"mean"``: the average over every token of the sentence, special tokens
            included, padding excluded (bias-bench's SEAT protocol); ``"cls"``: the vector at
            position 0 (``[CLS]``, ``<s>``).
        normalize: Divide each vector by its L2 norm (May et al.; bias-bench's SEAT).
        layer: Which hidden states: ``-1`` is the encoder's ``last_hidden_state`` (what
            bias-bench reads); any other index reads ``hidden_states[layer]``, where 0 is the
            embedding output and ``num_hidden_layers`` the last layer.

    Returns:
        float64 array ``[len(sentences), hidden_size]``, rows in input order.

    Raises:
        CdsbiasError: An unknown pooling, a layer the model does not have, an empty
            sentence, or a sentence longer than the model accepts.
    """
    import torch

    if pooling not in POOLINGS:
        raise CdsbiasError(f"Unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}.")
    encoder = scorer.model.base_model
    hidden_size = int(scorer.model.config.hidden_size)
    check_layer(scorer.model, layer)
    tokenizer = scorer.tokenizer
    distinct = list(dict.fromkeys(sentences))
    if any(not sentence.strip() for sentence in distinct):
        raise CdsbiasError("An empty sentence cannot be encoded; remove it from the input.")
    # One tokenizer call for all sentences: per-sentence calls cost more than a small
    # encoder's forward passes.
    encoded: list[list[int]] = (
        [
            list(ids)
            for ids in tokenizer(distinct, add_special_tokens=True, verbose=False)["input_ids"]
        ]
        if distinct
        else []
    )
    for sentence, ids in zip(distinct, encoded, strict=True):
        scorer.check_length(len(ids), shorten(sentence))
    vectors = np.empty((len(distinct), hidden_size), dtype=np.float64)
    order = sorted(range(len(distinct)), key=lambda i: len(encoded[i]))
    size = scorer.batch_size
    lengths = [len(ids) for ids in encoded]
    tokens = max_batch_tokens(scorer.model)
    batches = list(capped_batches(order, [0] * len(order), size, 0, lengths, tokens))
    iterator: Any = batches
    if getattr(scorer, "progress", False):
        from tqdm.auto import tqdm

        iterator = tqdm(batches, desc="encoding", unit="batch", leave=False)
    # A folded post-hoc map reaches the head only; read the encoder through it, as the
    # hooked model (and bias-bench's SEAT) would be read.
    with torch.inference_mode(), through_map(scorer.model, layer):
        for batch in iterator:
            width = max(len(encoded[i]) for i in batch)
            input_ids = torch.full((len(batch), width), scorer.pad_id, dtype=torch.long)
            attention = torch.zeros((len(batch), width), dtype=torch.long)
            for row, index in enumerate(batch):
                input_ids[row, : len(encoded[index])] = torch.as_tensor(encoded[index])
                attention[row, : len(encoded[index])] = 1
            output = encoder(
                input_ids=input_ids.to(scorer.device),
                attention_mask=attention.to(scorer.device),
                output_hidden_states=layer != -1,
            )
            states = output.last_hidden_state if layer == -1 else output.hidden_states[layer]
            states = states.double().cpu()
            if pooling == "cls":
                pooled = states[:, 0]
            else:
                # Padding is masked out of the mean so it equals the unpadded sentence's.
                weights = attention.to(states.dtype).unsqueeze(-1)
                pooled = (states * weights).sum(dim=1) / weights.sum(dim=1)
            vectors[batch] = pooled.numpy()
            scorer.sequences_run += len(batch)
    if normalize:
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms == 0, 1.0, norms)
    row_of = {sentence: row for row, sentence in enumerate(distinct)}
    if not sentences:
        return np.empty((0, hidden_size), dtype=np.float64)
    return vectors[[row_of[sentence] for sentence in sentences]]


def encoded_representation(scorer: Any, layer: int = -1) -> str:
    """What :func:`encode_sentences` reads for ``scorer``'s model, in words: ``"encoder"`` or
    ``"encoder through the SentenceDebias map (fold)"`` (:func:`~cdsbias.methods.head_fold.
    representation`), for a benchmark summary's ``representation``."""
    return representation(scorer.model, layer)
