"""Training examples from documents: one per sentence, or packed blocks of tokens.

Shared by the in-memory (:mod:`cdsbias.train.data`) and the streaming
(:mod:`cdsbias.train.streaming`) pipelines, so both cut and tokenize text the same way.

* ``sentence``: one example per sentence (as Bartl et al. 2020 trained on GAP), each
  truncated to ``max_seq_length`` tokens.
* ``chunk``: ``run_mlm.py``'s ``group_texts``: the documents of a map batch are tokenized
  (with their special tokens), concatenated and cut into blocks of exactly
  ``max_seq_length`` tokens; the batch's last, shorter block is dropped. No token is lost
  to truncation and no compute to padding — the usual choice for large corpora.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from typing import Any

from cdsbias.data.sentences import split_sentences

TEXT_UNITS = ("sentence", "chunk")
__all__ = ["TEXT_UNITS", "example_key", "split_sentences"]


def example_key(document_key: str, index: int) -> int:
    """A 63-bit example id from the document's key and the example's place in it.

    Streamed examples have no row number that survives sharding across dataloader
    workers and processes; this id does, and it keys the example's MLM masks.
    """
    digest = hashlib.blake2b(f"{document_key}:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@contextlib.contextmanager
def _quiet_length_warning() -> Iterator[None]:
    """Packing tokenizes whole documents on purpose; transformers would warn that they
    exceed the model's length (run_mlm.py silences the same warning)."""
    from transformers.utils import logging as hf_logging

    logger = hf_logging.get_logger("transformers.tokenization_utils_base")
    previous = logger.level
    logger.setLevel(hf_logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def tokenize_units(
    batch: dict[str, list[Any]],
    tokenizer: Any,
    text_unit: str,
    max_seq_length: int,
    keys: list[str] | None = None,
) -> dict[str, list[Any]]:
    """A batched map function: documents (``text``) to tokenized examples.

    Args:
        batch: Columns of a map batch; ``text`` holds the documents.
        tokenizer: The model's tokenizer.
        text_unit: ``sentence`` or ``chunk`` (see the module docstring).
        max_seq_length: Tokens per example.
        keys: Per document a stable key (its id or text hash). When given, each example
            gets an ``example_id`` from :func:`example_key` (the streaming pipeline);
            otherwise the caller numbers the examples.

    Returns:
        ``input_ids``, ``attention_mask``, ``special_tokens_mask`` (and the tokenizer's
        other outputs), plus ``example_id`` when ``keys`` is given.
    """
    texts = batch["text"]
    if text_unit == "sentence":
        units, owners = [], []
        for position, text in enumerate(texts):
            sentences = split_sentences(text)
            units.extend(sentences)
            owners.extend((position, k) for k in range(len(sentences)))
        encoded = dict(
            tokenizer(
                units, truncation=True, max_length=max_seq_length, return_special_tokens_mask=True
            )
        )
        if keys is not None:
            encoded["example_id"] = [example_key(keys[p], k) for p, k in owners]
        return encoded
    with _quiet_length_warning():
        encoded = dict(tokenizer(texts, return_special_tokens_mask=True))
    blocks = group_texts(encoded, max_seq_length)
    if keys is not None:
        first = keys[0] if keys else ""
        blocks["example_id"] = [example_key(first, k) for k in range(len(blocks["input_ids"]))]
    return blocks


def group_texts(encoded: dict[str, list[list[Any]]], block_size: int) -> dict[str, list[Any]]:
    """Concatenates every column's token lists and cuts them into ``block_size`` blocks.

    As ``group_texts`` in transformers' ``run_mlm.py``: the remainder shorter than one
    block is dropped (with the default map batch of 1000 documents that is at most one
    block's worth of tokens per 1000 documents).
    """
    columns = {name: [item for row in rows for item in row] for name, rows in encoded.items()}
    total = (len(columns["input_ids"]) // block_size) * block_size
    return {
        name: [values[i : i + block_size] for i in range(0, total, block_size)]
        for name, values in columns.items()
    }
