"""Streaming training data: a corpus of any size, read lazily, never held in memory.

``streaming: true`` turns the corpus into a ``datasets.IterableDataset``. Nothing is
prepared up front: counterfactual substitution and tokenization are ``map`` steps that run
as the Trainer draws batches, in its dataloader workers (``dataloader_num_workers``).

* **Held-out text.** The first ``heldout_documents`` documents of the stream are read once,
  kept in memory (they are few) and never trained on; training skips them.
* **Order.** The stream's own order, or with ``shuffle_buffer_size`` a seeded buffer
  shuffle (``IterableDataset.shuffle``, which also shuffles the order of the files).
* **Several processes.** The Trainer hands the stream to Accelerate, which (by default,
  ``dispatch_batches``) reads it on the main process and sends each process its own slice
  of every global batch: no example is trained on twice, the union of the examples seen is
  the stream's prefix, and the examples are the same whatever the number of processes.
  The main process does the data work; raise ``dataloader_num_workers`` to keep up.
* **Exact resume.** Example ids and CDS coins depend only on each document's key (its
  ``id``, or its text) and MLM masks only on the example id and the epoch, so the Trainer's
  replay of the batches before a checkpoint gives the same stream position and the same
  masks as the uninterrupted run. The replay re-reads those batches (it does not train on
  them); it assumes the stream was not exhausted before the checkpoint.
"""

from __future__ import annotations

import itertools
from typing import Any

from cdsbias.axes import DEFAULT_AXIS
from cdsbias.data.corpora import BUILTIN_CORPORA, open_corpus
from cdsbias.errors import CdsbiasError
from cdsbias.train.cds_config import CDSConfig
from cdsbias.train.config import DataConfig
from cdsbias.train.units import tokenize_units

#: Held-out documents of a stream when ``heldout_documents`` is not set.
DEFAULT_HELDOUT_DOCUMENTS = 1000
#: Documents a from-scratch tokenizer learns its vocabulary from, when streaming.
TOKENIZER_DOCUMENTS = 10_000


def load_stream(data: DataConfig) -> Any:
    """The training corpus as a ``datasets.IterableDataset`` (all its columns; the text is
    in ``data.text_column``, ``text`` for the built-in corpora).

    Built-in corpora are small and read in memory, then iterated; hub datasets and local
    files are opened with ``streaming=True``. The files, their encoding, the text column
    and that documents remain after the held-out ones are checked now, before a run
    touches its output folder.

    Raises:
        CdsbiasError: As :func:`cdsbias.cds.corpus_io.load_corpus`.
    """
    from cdsbias.train.data import load_documents

    if data.dataset in BUILTIN_CORPORA:
        corpus = load_documents(data).to_iterable_dataset()  # max_documents applied there
    else:
        corpus = open_corpus(data, streaming=True)
        if data.max_documents is not None:
            corpus = corpus.take(data.max_documents)
    n_heldout = heldout_size(data)
    if n_heldout:  # reads only the held-out documents and one more
        documents = sum(1 for _ in itertools.islice(iter(corpus), n_heldout + 1))
        if documents <= n_heldout:
            raise CdsbiasError(
                f"the corpus has only {documents} documents, none left to train on after "
                f"heldout_documents={n_heldout}; lower heldout_documents (0 keeps none)"
            )
    return corpus


def heldout_size(data: DataConfig) -> int:
    """How many documents at the start of the stream are held out."""
    if data.heldout_documents is None:
        return DEFAULT_HELDOUT_DOCUMENTS
    return data.heldout_documents


def _column_names(corpus: Any) -> list[str] | None:
    if corpus.column_names is not None:
        return corpus.column_names
    first = next(iter(corpus.take(1)), None)  # json streams learn their columns on reading
    return list(first) if first is not None else None


def _documents(batch: dict[str, list[Any]], text_column: str) -> dict[str, list[Any]]:
    """``text`` and, when the corpus has one, ``id`` (as text) of a batch of documents."""
    texts = batch[text_column]
    if any(not isinstance(text, str) for text in texts):
        bad = next(text for text in texts if not isinstance(text, str))
        kind = "an empty (null)" if bad is None else f"a {type(bad).__name__}"
        raise CdsbiasError(
            f"the corpus has a document with {kind} value in column '{text_column}'; drop or "
            "fill such rows, or choose another text_column"
        )
    out: dict[str, list[Any]] = {"text": list(texts)}
    if "id" in batch and text_column != "id":
        if any(value is None for value in batch["id"]):
            raise CdsbiasError("the corpus's id column has empty (null) values; fill or drop it")
        out["id"] = [str(value) for value in batch["id"]]
    return out


def text_column_of(data: DataConfig) -> str:
    """The column of :func:`load_stream`'s documents that holds their text."""
    return "text" if data.dataset in BUILTIN_CORPORA else data.text_column


def tokenizer_texts(stream: Any, data: DataConfig) -> list[str]:
    """The texts a from-scratch tokenizer learns from: the stream's first documents."""
    column = text_column_of(data)
    return [row[column] for row in itertools.islice(iter(stream), TOKENIZER_DOCUMENTS)]


def build_streaming_data(
    data: DataConfig,
    cds: CDSConfig,
    tokenizer: Any,
    *,
    seed: int,
    stream: Any,
    axis: str = DEFAULT_AXIS,
) -> Any:
    """The lazy training stream and the held-out set.

    Each batch of documents goes through one fused ``map`` step (:class:`StreamPreparer`:
    text and id, CDS, sentences or chunks, tokens): every ``map`` layer of an
    ``IterableDataset`` converts rows to batches and back in Python, which costs more
    than CDS itself.

    Args:
        data: The recipe's data section (``streaming: true``).
        cds: The recipe's CDS section.
        tokenizer: The model's tokenizer.
        seed: Seed of the held-out set's fixed masks.
        stream: :func:`load_stream` of ``data``.
        axis: The recipe's ``bias_axis``, whose words CDS substitutes.

    Returns:
        A :class:`~cdsbias.train.data.TrainingData` whose ``train`` is an
        ``IterableDataset`` and whose counts are ``None`` (unknown until read).
    """
    import datasets

    from cdsbias.train.data import TrainingData, counterfactual_mapper, heldout_set

    column = text_column_of(data)
    columns = _column_names(stream)  # before skipping: reads at most the first document
    n_heldout = heldout_size(data)
    heldout = None
    if n_heldout:
        rows = list(itertools.islice(iter(stream), n_heldout))
        documents = _documents({k: [row[k] for row in rows] for k in rows[0]}, column)
        heldout = heldout_set(datasets.Dataset.from_dict(documents), data, tokenizer, seed=seed)
        stream = stream.skip(n_heldout)
    if data.shuffle_buffer_size:
        # Deterministic for a seed and epoch (the Trainer sets the epoch), so a resumed
        # run replays the same order.
        stream = stream.shuffle(seed=seed, buffer_size=data.shuffle_buffer_size)
    has_ids = "id" in columns and column != "id"
    mapper = None
    if cds.cds_mode != "none":
        mapper = counterfactual_mapper(cds, ["id"] if has_ids else [], axis)
    prepare = StreamPreparer(column, mapper, tokenizer, data.text_unit, data.max_seq_length)
    train = stream.map(prepare, batched=True, remove_columns=columns)
    return TrainingData(train, heldout, None, None)


class StreamPreparer:
    """A picklable batched map function: raw corpus rows to tokenized training examples.

    Example ids come from each document's key: its id (if any) and a hash of its
    (substituted) text, so that with CDA a document and its counterfactual, which share
    the id, are different examples with different masks.
    """

    def __init__(
        self, text_column: str, mapper: Any, tokenizer: Any, text_unit: str, max_seq_length: int
    ) -> None:
        self.text_column = text_column
        self.mapper = mapper
        self.tokenizer = tokenizer
        self.text_unit = text_unit
        self.max_seq_length = max_seq_length

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        from cdsbias.cds.document_seed import text_key

        documents = _documents(batch, self.text_column)
        if self.mapper is not None:
            documents = self.mapper(documents)
        ids = documents.get("id")
        keys = [
            f"{ids[i]}|{text_key(text)}" if ids is not None else text_key(text)
            for i, text in enumerate(documents["text"])
        ]
        return tokenize_units(
            documents, self.tokenizer, self.text_unit, self.max_seq_length, keys=keys
        )
