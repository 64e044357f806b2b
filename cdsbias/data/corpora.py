"""What the recipe's ``dataset`` names, and which corpus keys apply to it.

``gap``, ``occupations`` and ``occupations+gap`` are built in; ``text``/``json``/``csv``/
``parquet`` read local ``data_files``; anything else is a hub id or a local dataset folder
for ``datasets.load_dataset``. A key that does not shape the chosen corpus is an error
(never dropped silently), checked before any data is read.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.hub import is_repo_id

__all__ = [
    "BUILTIN_CORPORA",
    "CORPUS_KEYS",
    "LOCAL_BUILDERS",
    "corpus_kinds",
    "describe_corpus",
    "is_local_dataset",
    "open_corpus",
    "validate_corpus",
]


#: Built-in training corpora (``dataset`` values that are neither hub ids nor builders).
BUILTIN_CORPORA = ("gap", "occupations", "occupations+gap")
#: ``datasets`` builders for local files (``dataset`` values that need ``data_files``).
LOCAL_BUILDERS = ("text", "json", "csv", "parquet")
#: Keys that only apply to some corpora: the corpora (by kind) each one shapes.
CORPUS_KEYS = {
    "data_files": ("local", "hub"),  # a hub repo's files, as load_dataset(id, data_files=)
    "dataset_config_name": ("hub",),
    "dataset_split": ("hub",),
    "text_column": ("hub", "local"),
    "splits": ("gap",),
    "data_dir": ("gap",),
    "occupation_sentences": ("occupations",),
    "occupation_seed": ("occupations",),
}


def is_local_dataset(dataset: str) -> bool:
    """Whether ``dataset`` (not a built-in corpus or builder) is a path on this machine
    rather than a hub id: such a value must never reach a model card."""
    return Path(dataset).expanduser().exists() or not is_repo_id(dataset)


def corpus_kinds(dataset: str) -> tuple[str, ...]:
    """What ``dataset`` names: ``("gap",)``, ``("occupations",)``, both, ``("local",)``
    (a builder reading ``data_files``) or ``("hub",)`` (anything ``load_dataset`` takes)."""
    if dataset in BUILTIN_CORPORA:
        return tuple(dataset.split("+"))
    return ("local",) if dataset in LOCAL_BUILDERS else ("hub",)


def validate_corpus(data: Any, source: dict[str, Any]) -> None:
    """Conflicting or missing corpus keys; checks file names, never reads the data.

    Args:
        data: The recipe's :class:`~cdsbias.train.config.DataConfig` (not imported here:
            config.py imports this module).
        source: The recipe's keys as given (YAML and overrides).
    """
    from cdsbias.cds.corpus_io import expand_inputs

    if not data.dataset:
        raise CdsbiasError("dataset is empty; set gap, occupations, a hub id or json/csv/...")
    kinds = corpus_kinds(data.dataset)
    builtin = set(kinds) <= {"gap", "occupations"}
    for key, shapes in CORPUS_KEYS.items():
        if builtin and set(shapes) <= {"gap", "occupations"}:
            continue  # recipes of the built-in corpora keep loading as before these keys
        if key in source and source[key] is not None and not set(kinds) & set(shapes):
            # Never drop a key silently: the user meant it to change the corpus.
            raise CdsbiasError(
                f"{key} does not apply to dataset: {data.dataset} (only to "
                f"{' or '.join(_KIND_NAMES[k] for k in shapes)}); remove it or change dataset."
            )
    if kinds == ("occupations",) and data.max_documents is not None:
        # The generated corpus has occupation_sentences documents; a second size would be
        # ignored (with occupations+gap, max_documents cuts GAP).
        raise CdsbiasError(
            "max_documents does not apply to dataset: occupations (occupation_sentences sets "
            "its size); remove it (max_documents=null) or set occupation_sentences."
        )
    if kinds == ("local",):
        if not data.data_files:
            raise CdsbiasError(
                f"dataset: {data.dataset} reads local files; set data_files to a path, glob "
                "or list (e.g. data_files=corpus/*.jsonl)."
            )
        try:  # missing files, empty globs, mixed or unknown kinds: before any data is read
            expand_inputs(data.data_files)
        except CdsbiasError as exc:
            raise CdsbiasError(f"data_files: {exc}") from None
    if data.max_documents is not None and data.max_documents < 1:
        raise CdsbiasError(f"max_documents must be at least 1, got {data.max_documents}.")
    if data.streaming and "heldout_fraction" in source:
        if data.heldout_documents is None:
            raise CdsbiasError(
                "heldout_fraction needs the whole corpus in memory; with streaming: true set "
                "heldout_documents: N (the first N documents of the stream) instead."
            )
        warnings.warn(
            f"heldout_fraction is ignored with streaming: true; heldout_documents="
            f"{data.heldout_documents} chooses the held-out text (remove heldout_fraction).",
            stacklevel=4,
        )
    if not data.streaming and data.heldout_documents is not None:
        raise CdsbiasError(
            "heldout_documents applies to streaming: true; in memory set heldout_fraction."
        )
    if not data.streaming and data.shuffle_buffer_size:
        raise CdsbiasError(
            "shuffle_buffer_size applies to streaming: true; in memory the Trainer shuffles "
            "every epoch."
        )
    if data.shuffle_buffer_size < 0:
        size = data.shuffle_buffer_size
        raise CdsbiasError(f"shuffle_buffer_size must be 0 or more, got {size}.")
    if data.heldout_documents is not None and data.heldout_documents < 0:
        raise CdsbiasError(f"heldout_documents must be 0 or more, got {data.heldout_documents}.")


_KIND_NAMES = {
    "gap": "dataset: gap",
    "occupations": "dataset: occupations",
    "local": f"dataset: {'/'.join(LOCAL_BUILDERS)}",
    "hub": "a hub dataset id",
}


def open_corpus(data: Any, *, streaming: bool) -> Any:
    """A hub dataset or local files (not a built-in corpus), every column, text checked,
    through :func:`cdsbias.cds.corpus_io.load_corpus`: a ``Dataset``, or an
    ``IterableDataset`` when ``streaming``. ``data`` is the recipe's
    :class:`~cdsbias.train.config.DataConfig`.
    """
    from cdsbias.cds.corpus_io import load_corpus

    common = {
        "text_column": data.text_column, "text_option": "text_column=NAME",
        "streaming": streaming,
    }  # fmt: skip
    if corpus_kinds(data.dataset) == ("local",):
        if not data.data_files:
            raise CdsbiasError(f"dataset: {data.dataset} needs data_files (a path, glob or list).")
        return load_corpus(data.data_files, builder=data.dataset, **common)
    return load_corpus(
        dataset=data.dataset, config=data.dataset_config_name, split=data.dataset_split,
        data_files=data.data_files, **common,
    )  # fmt: skip


#: What each part of a corpus is, for model cards: (hub dataset id or None, description).
CORPUS_PARTS = {
    "gap": ("google-research-datasets/gap", "GAP Wikipedia snippets (Webster et al. 2018)"),
    "occupations": (None, "generated occupational sentences (cdsbias `occupations` corpus)"),
}
#: The corpus keys :func:`describe_corpus` reads, with their recipe defaults.
_DESCRIBED = {
    "dataset": "gap", "dataset_config_name": None, "dataset_split": "train",
    "data_files": None, "text_column": "text", "streaming": False, "max_documents": None,
}  # fmt: skip


def describe_corpus(data: Any, n_documents: int | None = None) -> dict[str, Any]:
    """The hub dataset ids and a readable description of the training corpus.

    Never names a path of this machine: local files are described by kind and size, a
    local dataset folder as such. ``n_documents`` is the size when the caller has the
    documents already (a training run); otherwise they are counted if still readable.

    Args:
        data: The recipe's ``DataConfig``, or a finished run's recipe values.
        n_documents: The number of documents, when known.
    """
    if isinstance(data, Mapping):
        data = SimpleNamespace(**{k: data.get(k, v) for k, v in _DESCRIBED.items()})
    kinds = corpus_kinds(data.dataset)
    if kinds in (("local",), ("hub",)):
        local = kinds == ("local",) or is_local_dataset(data.dataset)
        what = f"local {data.dataset} files" if kinds == ("local",) else "a local dataset folder"
        if not local:
            config = f" ({data.dataset_config_name})" if data.dataset_config_name else ""
            what = f"{data.dataset}{config}, split {data.dataset_split}"
            if data.data_files:  # files of the hub repository, not of this machine
                what += f" (files {', '.join(data.data_files)})"
        if kinds == ("local",) and not data.data_files:
            return {"datasets": [], "description": what}  # a recipe without its files
        if n_documents is None and data.streaming:
            what += ", streamed"  # counting would read the whole corpus
        elif n_documents is None:
            # A finished run's folder: count them if the files are still there; if they
            # are gone the kind alone is still right.
            with contextlib.suppress(CdsbiasError):
                n_documents = len(open_corpus(data, streaming=False))
                if data.max_documents is not None:
                    n_documents = min(n_documents, data.max_documents)
        if n_documents is not None:
            what += f" ({n_documents} documents)"
        return {"datasets": [] if local else [data.dataset], "description": what}
    parts = [part for part in ("occupations", "gap") if part in kinds]
    return {
        "datasets": [CORPUS_PARTS[p][0] for p in parts if CORPUS_PARTS[p][0]],
        "description": " and ".join(CORPUS_PARTS[p][1] for p in parts),
    }
