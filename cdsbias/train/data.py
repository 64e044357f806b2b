"""Training data: GAP -> held-out split -> CDS -> sentences/chunks -> tokens.

Everything goes through ``datasets`` so that each step is cached in Arrow files keyed by
its inputs and settings, and runs in ``num_proc`` processes when asked.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from cdsbias.errors import CdsbiasError
from cdsbias.occupations import occupational_sentences
from cdsbias.train.config import (
    BUILTIN_CORPORA,
    CDSConfig,
    DataConfig,
    corpus_kinds,
    is_local_dataset,
)

GAP_FILES = {
    "development": "gap-development.tsv",
    "test": "gap-test.tsv",
    "validation": "gap-validation.tsv",
}

# Abbreviations after which a full stop does not end a sentence (Wikipedia prose).
_ABBREVIATIONS = [
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Prof",
    "St",
    "Jr",
    "Sr",
    "Mt",
    "Gen",
    "Col",
    "Lt",
    "Sgt",
    "Capt",
    "Rev",
    "Hon",
    "Gov",
    "Sen",
    "Rep",
    "Pres",
    "No",
    "Vol",
    "Inc",
    "Ltd",
    "Co",
    "Corp",
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Sept",
    "Oct",
    "Nov",
    "Dec",
    "vs",
    "etc",
    "al",
    "e.g",
    "i.e",
    "U.S",
    "U.K",
]
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Splits prose into sentences at ``.!?`` followed by space and a capital or digit.

    A rule-based splitter (no model download, unlike NLTK's punkt): it does not split
    after common abbreviations ("Dr. Smith", "U.S. Army") or single initials ("J. Smith").
    """
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].rstrip("\"')]")
        last_word = before.rsplit(None, 1)[-1] if before.split() else ""
        stem = last_word.rstrip(".!?")
        if stem in _ABBREVIATIONS or (len(stem) == 1 and stem.isupper()):
            continue
        sentence = text[start : match.end()].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def gap_paths(data: DataConfig) -> list[Path]:
    """The GAP files of the recipe, from ``data_dir`` or the fetch cache."""
    from cdsbias.fetch import resolve

    paths = []
    for split in data.splits:
        if split not in GAP_FILES:
            raise CdsbiasError(f"Unknown GAP split '{split}'; available: {', '.join(GAP_FILES)}.")
        paths.append(
            resolve("gap", GAP_FILES[split], Path(data.data_dir) if data.data_dir else None)
        )
    return paths


#: What each part of a corpus is, for model cards: (hub dataset id or None, description).
CORPUS_PARTS = {
    "gap": ("google-research-datasets/gap", "GAP Wikipedia snippets (Webster et al. 2018)"),
    "occupations": (None, "generated occupational sentences (cdsbias `occupations` corpus)"),
}


def describe_corpus(data: DataConfig, n_documents: int | None = None) -> dict[str, Any]:
    """The hub dataset ids and a readable description of the training corpus.

    Never names a path of this machine: local files are described by kind and size, a
    local dataset folder as such. ``n_documents`` is the size when the caller has the
    documents already (a training run); otherwise they are counted if still readable.
    """
    kinds = corpus_kinds(data.dataset)
    if kinds in (("local",), ("hub",)):
        local = kinds == ("local",) or is_local_dataset(data.dataset)
        what = f"local {data.dataset} files" if kinds == ("local",) else "a local dataset folder"
        if not local:
            config = f" ({data.dataset_config_name})" if data.dataset_config_name else ""
            what = f"{data.dataset}{config}, split {data.dataset_split}"
        if kinds == ("local",) and not data.data_files:
            return {"datasets": [], "description": what}  # an old run's recipe: no files
        if n_documents is None:
            # An older run's folder: count them if the files are still there; if they
            # are gone the kind alone is still right.
            with contextlib.suppress(CdsbiasError):
                n_documents = len(load_documents(data))
        if n_documents is not None:
            what += f" ({n_documents} documents)"
        return {"datasets": [] if local else [data.dataset], "description": what}
    parts = [part for part in ("occupations", "gap") if part in kinds]
    return {
        "datasets": [CORPUS_PARTS[p][0] for p in parts if CORPUS_PARTS[p][0]],
        "description": " and ".join(CORPUS_PARTS[p][1] for p in parts),
    }


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
    texts = occupational_sentences(data.occupation_sentences, seed=data.occupation_seed)
    return datasets.Dataset.from_dict(
        {"id": [f"occupations-{i}" for i in range(len(texts))], "text": texts}
    )


def _corpus_documents(data: DataConfig) -> Any:
    """A hub dataset or local files, through ``corpus_io.load_corpus``, as ``id``/``text``."""
    import datasets

    from cdsbias.cds.corpus_io import load_corpus

    if corpus_kinds(data.dataset) == ("local",):
        if not data.data_files:
            raise CdsbiasError(f"dataset: {data.dataset} needs data_files (a path, glob or list).")
        corpus = load_corpus(
            data.data_files, builder=data.dataset, text_column=data.text_column,
            text_option="text_column=NAME",
        )  # fmt: skip
        split = "train"  # load_dataset puts local files in one split
    else:
        corpus = load_corpus(
            dataset=data.dataset, config=data.dataset_config_name, split=data.dataset_split,
            text_column=data.text_column, text_option="text_column=NAME",
        )  # fmt: skip
        split = data.dataset_split
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
    else:
        # Row positions within the split: stable for a given corpus file.
        documents = documents.add_column("id", [f"{split}-{i}" for i in range(len(corpus))])
    return documents.select_columns(["id", "text"])


def load_documents(data: DataConfig) -> Any:
    """Training documents as a ``datasets.Dataset`` with columns ``id`` and ``text``.

    ``gap``: GAP's Wikipedia snippets; ``occupations``: generated sentences whose person
    gender follows each profession's share of women (see :mod:`cdsbias.occupations`);
    ``occupations+gap``: both; a hub dataset id or ``text``/``json``/``csv``/``parquet``
    with ``data_files``: the ``text_column`` of that corpus, its ``id`` column if it has
    one, else ``SPLIT-ROW``. ``max_documents`` applies to every corpus but ``occupations``.

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


def _units(batch: dict[str, list[Any]], text_unit: str) -> dict[str, list[Any]]:
    texts = []
    for text in batch["text"]:
        texts.extend(split_sentences(text) if text_unit == "sentence" else [text])
    return {"text": texts}


@dataclass
class TrainingData:
    """Tokenized datasets for the Trainer."""

    train: Any
    heldout: Any | None
    n_documents: int
    n_counterfactual: int


def build_training_data(
    data: DataConfig, cds: CDSConfig, tokenizer: Any, *, seed: int, documents: Any = None
) -> TrainingData:
    """Builds the tokenized training set (CDS applied) and the held-out set (original text,
    masked once with a fixed seed so its loss is comparable across checkpoints).

    ``documents`` are :func:`load_documents` of ``data`` when the caller has read them.
    """
    from transformers import DataCollatorForLanguageModeling

    from cdsbias.cds import CounterfactualMapper

    if documents is None:
        documents = load_documents(data)
    if data.heldout_fraction > 0 and len(documents) > 1:
        split = documents.train_test_split(test_size=data.heldout_fraction, seed=seed)
        train_docs, heldout_docs = split["train"], split["test"]
    else:
        train_docs, heldout_docs = documents, None
    n_counterfactual = 0
    if cds.cds_mode != "none":
        mapper = CounterfactualMapper(
            "text", mode=cds.cds_mode, probability=cds.cds_probability, seed=cds.cds_seed,
            names=cds.cds_names, id_column="id",
        )  # fmt: skip
        train_docs = train_docs.map(
            mapper, batched=True, num_proc=data.preprocessing_num_workers,
            desc="counterfactual substitution",
        )  # fmt: skip
        n_counterfactual = int(sum(train_docs["counterfactual"]))

    def tokenize(dataset: Any, desc: str) -> Any:
        units = dataset.map(
            _units, batched=True, remove_columns=dataset.column_names,
            fn_kwargs={"text_unit": data.text_unit}, num_proc=data.preprocessing_num_workers,
            desc=f"{desc}: {data.text_unit}s",
        )  # fmt: skip
        return units.map(
            lambda batch: tokenizer(
                batch["text"], truncation=True, max_length=data.max_seq_length,
                return_special_tokens_mask=True,
            ),
            batched=True, remove_columns=["text"], num_proc=data.preprocessing_num_workers,
            desc=f"{desc}: tokenize",
        )  # fmt: skip

    train = tokenize(train_docs, "train")
    train = train.add_column("example_id", list(range(len(train))))
    heldout = None
    if heldout_docs is not None:
        heldout_tokens = tokenize(heldout_docs, "held-out")
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

        heldout = heldout_tokens.map(
            static_mask, batched=True, remove_columns=heldout_tokens.column_names,
            desc="held-out: fixed masking", load_from_cache_file=False,
        )  # fmt: skip
    return TrainingData(train, heldout, len(documents), n_counterfactual)


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
