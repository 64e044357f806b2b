"""Training data: GAP -> held-out split -> CDS -> sentences/chunks -> tokens.

Everything goes through ``datasets`` so that each step is cached in Arrow files keyed by
its inputs and settings, and runs in ``num_proc`` processes when asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from cdsbias.axes import DEFAULT_AXIS
from cdsbias.data.corpora import (
    BUILTIN_CORPORA,
    open_corpus,
)
from cdsbias.data.gap import DATASET as GAP
from cdsbias.data.gap import GAP_FILES
from cdsbias.data.occupations import occupational_sentences
from cdsbias.errors import CdsbiasError
from cdsbias.train.cds_config import CDSConfig
from cdsbias.train.config import DataConfig
from cdsbias.train.units import split_sentences, tokenize_units

__all__ = ["build_training_data", "load_documents", "split_sentences"]


def gap_paths(data: DataConfig) -> list[Path]:
    """The GAP files of the recipe, from ``data_dir`` or the fetch cache."""
    from cdsbias.data.fetch import resolve

    paths = []
    for split in data.splits:
        if split not in GAP_FILES:
            raise CdsbiasError(f"Unknown GAP split '{split}'; available: {', '.join(GAP_FILES)}.")
        paths.append(
            resolve(GAP.name, GAP_FILES[split], Path(data.data_dir) if data.data_dir else None)
        )
    return paths


def _gap_documents(data: DataConfig) -> Any:
    import datasets

    from cdsbias.cds import read_gap

    paths = gap_paths(data)
    for path in paths:  # validates columns, encoding and offsets with a clear error
        read_gap(path)
    # QUOTE_NONE: GAP texts contain quotation marks but never tabs.
    documents = datasets.load_dataset(
        "csv", data_files={"train": [str(p) for p in paths]}, delimiter="\t", quoting=3,
        split="train",
    )  # fmt: skip
    return documents.select_columns(["ID", "Text"]).rename_columns({"ID": "id", "Text": "text"})


def _occupation_documents(data: DataConfig) -> Any:
    import datasets

    # A different seed from the demo model's pre-training corpus: same kind of text, new sentences.
    texts = occupational_sentences(
        data.occupation_sentences, seed=data.occupation_seed, language=data.occupation_language
    )
    return datasets.Dataset.from_dict(
        {"id": [f"occupations-{i}" for i in range(len(texts))], "text": texts}
    )


def _corpus_documents(data: DataConfig) -> Any:
    """A hub dataset or local files, through ``corpus_io.load_corpus``: ``text``, and ``id``
    when the corpus has one."""
    import datasets

    corpus = open_corpus(data, streaming=False)
    if data.max_documents is not None:
        corpus = corpus.select(range(min(data.max_documents, len(corpus))))
    documents = corpus.select_columns([data.text_column])
    if data.text_column != "text":
        documents = documents.rename_column(data.text_column, "text")
    if "id" in corpus.column_names and data.text_column != "id":
        ids = corpus.features["id"]
        if not isinstance(ids, datasets.Value):
            raise CdsbiasError(
                f"the corpus's id column holds {ids}, not one value per document; rename or drop it"
            )
        if corpus.data.column("id").null_count:
            raise CdsbiasError("the corpus's id column has empty (null) values; fill or drop it")
        # The id keys each document's CDS coin: the corpus's own ids keep it stable when
        # rows are reordered or added.
        documents = documents.add_column("id", [str(i) for i in corpus["id"]])
        return documents.select_columns(["id", "text"])
    # No id: each document's coin is keyed by its text, as `cdsbias cds` does, so the two
    # agree, and a streamed run (where row numbers do not survive sharding) agrees too.
    return documents.select_columns(["text"])


def load_documents(data: DataConfig) -> Any:
    """Training documents as a ``datasets.Dataset`` with columns ``text`` and (mostly) ``id``.

    ``gap``: GAP's Wikipedia snippets; ``occupations``: generated sentences whose person
    gender follows each profession's share of women (see :mod:`cdsbias.data.occupations`);
    ``occupations+gap``: both; a hub dataset id or ``text``/``json``/``csv``/``parquet``
    with ``data_files``: the ``text_column`` of that corpus and its ``id`` column if it has
    one (without one, CDS keys each document by its text). ``max_documents`` applies to
    every corpus but ``occupations``.

    Raises:
        CdsbiasError: Missing or unreadable files, an empty corpus, a missing text column.
    """
    import datasets

    if data.dataset not in BUILTIN_CORPORA:
        return _corpus_documents(data)
    parts = []
    if "occupations" in data.dataset:
        parts.append(_occupation_documents(data))
    if "gap" in data.dataset:
        gap = _gap_documents(data)
        if data.max_documents is not None:
            gap = gap.select(range(min(data.max_documents, len(gap))))
        parts.append(gap)
    if len(parts) == 1:
        return parts[0]
    return datasets.concatenate_datasets([p.cast(parts[0].features) for p in parts])


@dataclass
class TrainingData:
    """Tokenized datasets for the Trainer."""

    train: Any  # a Dataset, or an IterableDataset when streaming
    heldout: Any | None
    n_documents: int | None  # None: a stream (its size is unknown until read)
    n_counterfactual: int | None


def build_training_data(
    data: DataConfig,
    cds: CDSConfig,
    tokenizer: Any,
    *,
    seed: int,
    documents: Any = None,
    axis: str = DEFAULT_AXIS,
) -> TrainingData:
    """Builds the tokenized training set (CDS applied) and the held-out set (original text,
    masked once with a fixed seed so its loss is comparable across checkpoints).

    ``documents`` are :func:`load_documents` of ``data`` when the caller has read them;
    ``axis`` is the recipe's ``bias_axis``, whose words CDS substitutes.
    """
    if documents is None:
        documents = load_documents(data)
    if data.heldout_fraction > 0 and len(documents) > 1:
        split = documents.train_test_split(test_size=data.heldout_fraction, seed=seed)
        train_docs, heldout_docs = split["train"], split["test"]
    else:
        train_docs, heldout_docs = documents, None
    n_counterfactual = 0
    if cds.cds_mode != "none":
        train_docs = train_docs.map(
            counterfactual_mapper(cds, train_docs.column_names, axis), batched=True,
            num_proc=data.preprocessing_num_workers, desc="counterfactual substitution",
        )  # fmt: skip
        n_counterfactual = int(sum(train_docs["counterfactual"]))
    train = tokenize_documents(train_docs, data, tokenizer, "train")
    if len(train) == 0:
        raise CdsbiasError(_too_short(data))
    train = train.add_column("example_id", list(range(len(train))))
    heldout = None
    if heldout_docs is not None:
        heldout = heldout_set(heldout_docs, data, tokenizer, seed=seed)
    return TrainingData(train, heldout, len(documents), n_counterfactual)


def counterfactual_mapper(cds: CDSConfig, columns: Any, axis: str = DEFAULT_AXIS) -> Any:
    """The recipe's mapper, coins keyed by ``id``, else by the text: gender's
    ``CounterfactualMapper`` (exactly as before axes existed), or for any other axis the
    n-ary ``AxisCounterfactualMapper`` (cdsbias.cds.axis_corpus)."""
    from cdsbias.cds import CounterfactualMapper
    from cdsbias.cds.axis_corpus import AxisCounterfactualMapper, is_gender

    id_column = "id" if "id" in (columns or ()) else None
    if not is_gender(axis):
        return AxisCounterfactualMapper(
            "text", axis=axis, mode=cds.cds_mode, probability=cds.cds_probability,
            seed=cds.cds_seed, id_column=id_column, counterfactuals=cds.cds_counterfactuals,
            language=cds.cds_language,
        )  # fmt: skip
    return CounterfactualMapper(
        "text", mode=cds.cds_mode, probability=cds.cds_probability, seed=cds.cds_seed,
        names=cds.cds_names, id_column=id_column,
        language=cds.cds_language,
        language_options=None if cds.cds_agreement else {"agreement": False},
        gender_forms=cds.forms(),
    )  # fmt: skip


def tokenize_documents(documents: Any, data: DataConfig, tokenizer: Any, desc: str) -> Any:
    """Documents (a ``Dataset``) to tokenized examples: sentences or packed blocks."""
    return documents.map(
        tokenize_units, batched=True, remove_columns=documents.column_names,
        fn_kwargs={"tokenizer": tokenizer, "text_unit": data.text_unit,
                   "max_seq_length": data.max_seq_length},
        num_proc=data.preprocessing_num_workers, desc=f"{desc}: {data.text_unit}s",
    )  # fmt: skip


def heldout_set(documents: Any, data: DataConfig, tokenizer: Any, *, seed: int) -> Any:
    """The held-out documents' original text, tokenized and masked once with ``seed``.

    Fixed masks make the held-out MLM loss comparable from checkpoint to checkpoint.
    """
    from transformers import DataCollatorForLanguageModeling

    tokens = tokenize_documents(documents, data, tokenizer, "held-out")
    masker = DataCollatorForLanguageModeling(
        tokenizer, mlm_probability=data.mlm_probability, seed=seed
    )

    def static_mask(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        rows = [{k: batch[k][i] for k in batch} for i in range(len(batch["input_ids"]))]
        out: dict[str, list[Any]] = {"input_ids": [], "attention_mask": [], "labels": []}
        for row in rows:
            masked = masker([row])
            length = len(row["input_ids"])
            out["input_ids"].append(masked["input_ids"][0][:length].tolist())
            out["attention_mask"].append([1] * length)
            out["labels"].append(masked["labels"][0][:length].tolist())
        return out

    return tokens.map(
        static_mask, batched=True, remove_columns=tokens.column_names,
        desc="held-out: fixed masking", load_from_cache_file=False,
    )  # fmt: skip


def _too_short(data: DataConfig) -> str:
    if data.text_unit == "chunk":
        return (
            f"the training text is shorter than one block of max_seq_length={data.max_seq_length} "
            "tokens; use text_unit=sentence, a smaller max_seq_length or more documents"
        )
    return "the training documents hold no text; check text_column and the corpus"


class MLMCollator:
    """MLM masking for training batches; pre-masked (held-out) batches pass through.

    Each training example is masked with a generator seeded by ``(seed, epoch, example_id)``
    (``transformers``' own 80/10/10 masking applied row by row). Masks are thus a pure
    function of the example and the epoch: a run resumed after a crash masks exactly as
    an uninterrupted one, whatever the Trainer prefetched or restored, and the result does
    not depend on the number of dataloader workers or processes. Masks still change from
    epoch to epoch (dynamic masking, as in RoBERTa).
    """

    def __init__(self, tokenizer: Any, mlm_probability: float, seed: int = 0) -> None:
        from transformers import DataCollatorForLanguageModeling

        self.tokenizer = tokenizer
        self.seed = seed
        self.epoch = 0
        self.masker = DataCollatorForLanguageModeling(tokenizer, mlm_probability=mlm_probability)

    def _generator(self, example_id: int) -> Any:
        import hashlib

        import torch

        key = f"{self.seed}:{self.epoch}:{example_id}".encode()
        seed = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") >> 1
        return torch.Generator().manual_seed(seed)

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        if "labels" in features[0]:
            return self._pad(features, [list(f["labels"]) for f in features])
        if "example_id" not in features[0]:
            raise CdsbiasError("Training examples need an example_id column for masking.")
        masked, labels = [], []
        for feature in features:
            ids = torch.tensor([feature["input_ids"]])
            special = feature.get("special_tokens_mask")
            special = torch.tensor([special]).bool() if special is not None else None
            self.masker.generator = self._generator(int(feature["example_id"]))
            inputs, targets = self.masker.torch_mask_tokens(ids, special_tokens_mask=special)
            keep = {k: v for k, v in feature.items()
                    if k not in ("example_id", "special_tokens_mask", "input_ids")}  # fmt: skip
            masked.append({**keep, "input_ids": inputs[0].tolist()})
            labels.append(targets[0].tolist())
        return self._pad(masked, labels)

    def _pad(self, features: list[dict[str, Any]], labels: list[list[int]]) -> dict[str, Any]:
        import torch

        inputs = [
            {k: v for k, v in f.items() if k not in ("labels", "example_id", "special_tokens_mask")}
            for f in features
        ]
        batch = self.tokenizer.pad(inputs, return_tensors="pt")
        width = batch["input_ids"].shape[1]
        batch["labels"] = torch.tensor([row + [-100] * (width - len(row)) for row in labels])
        return batch


class EpochCallback(TrainerCallback):
    """Tells the collator which epoch it masks for (set before the epoch's first batch)."""

    def __init__(self, collator: MLMCollator) -> None:
        self.collator = collator

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.collator.epoch = round(state.epoch or 0)
        return control
