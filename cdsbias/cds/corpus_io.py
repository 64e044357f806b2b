"""Reading and writing corpora for CDS, all through ``datasets``.

Inputs: local files by extension (``.txt`` one document per line, ``.jsonl``/``.json``,
``.csv``, ``.parquet``; globs and several files of one kind) or a ``datasets`` id / local
dataset folder. Outputs: ``.jsonl``, ``.parquet`` or a ``save_to_disk`` folder, each written
to a temporary path beside the target and renamed, so a failure never touches an earlier
output. Every user mistake becomes a one-line ``CdsbiasError``.
"""

from __future__ import annotations

import codecs
import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError

#: ``load_dataset`` builder for each supported input extension.
INPUT_BUILDERS = {
    ".txt": "text",
    ".jsonl": "json",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}
#: Output file extensions; any other path without one of ``_DATA_SUFFIXES`` is a folder.
OUTPUT_SUFFIXES = (".jsonl", ".parquet")
# Data-file extensions that look like a file the user wants but that we do not write:
# refused rather than silently turned into a folder with a misleading name.
_DATA_SUFFIXES = {".json", ".csv", ".txt", ".tsv", ".arrow", ".gz", ".bz2", ".zst", ".xz"}
_GLOB_CHARS = "*?["


def output_format(out: Path) -> str:
    """``"jsonl"``, ``"parquet"`` or ``"folder"`` for ``out``; refuses other data suffixes."""
    suffix = out.suffix.lower()
    if suffix in OUTPUT_SUFFIXES:
        return suffix[1:]
    if suffix in _DATA_SUFFIXES:
        raise CdsbiasError(
            f"cannot write '{out}': use an output ending in {' or '.join(OUTPUT_SUFFIXES)}, "
            "or a folder name without a suffix (save_to_disk)"
        )
    return "folder"


def expand_inputs(patterns: Sequence[str | os.PathLike]) -> tuple[str, list[Path]]:
    """Expands file names and globs into the ``load_dataset`` builder and the sorted files.

    Raises:
        CdsbiasError: A file that does not exist, a glob that matches nothing, an
            unsupported extension, or files of different kinds.
    """
    files: list[Path] = []
    for pattern in map(str, patterns):
        if any(char in pattern for char in _GLOB_CHARS):
            matches = sorted(p for p in glob.glob(pattern, recursive=True) if Path(p).is_file())
            if not matches:
                raise CdsbiasError(f"no file matches '{pattern}'; check the pattern and folder")
            files.extend(Path(p) for p in matches)
        elif Path(pattern).is_dir():
            raise CdsbiasError(
                f"input '{pattern}' is a folder; give --dataset {pattern}, or a glob such as "
                f"'{pattern}/*.jsonl'"
            )
        elif not Path(pattern).is_file():
            raise CdsbiasError(f"input file not found: {pattern}")
        else:
            files.append(Path(pattern))
    builders = set()
    for path in files:
        builder = INPUT_BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise CdsbiasError(
                f"unsupported input '{path}': use {', '.join(INPUT_BUILDERS)} files, a GAP "
                ".tsv, or --dataset ID"
            )
        builders.add(builder)
    if len(builders) > 1:
        raise CdsbiasError(
            f"inputs mix file kinds ({', '.join(sorted(builders))}); give files of one kind"
        )
    return builders.pop(), files


def first_invalid_utf8(path: Path) -> tuple[int, int] | None:
    """Byte offset and line number of the first byte that is not UTF-8, or None."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    lines = 1
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(1 << 20)
            # Bytes of a character split across chunks wait in the decoder's buffer;
            # error positions count from the start of that buffer.
            pending = decoder.getstate()[0]
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                position = offset - len(pending) + exc.start
                data = pending + chunk
                return position, lines + data[: exc.start].count(b"\n")
            if not chunk:
                return None
            offset += len(chunk)
            lines += chunk.count(b"\n")


def _read_error(builder: str, files: list[Path], exc: BaseException) -> CdsbiasError:
    """Turns a ``load_dataset`` failure on local files into one readable line."""
    if builder != "parquet":
        for path in files:
            bad = first_invalid_utf8(path)
            if bad is not None:
                return _not_utf8(path, bad)
    cause = exc.__cause__ or exc
    if "SchemaInferenceError" in type(cause).__name__ or isinstance(cause, StopIteration):
        return _empty_error(files)
    if "corresponds to no data" in str(cause):
        return _empty_error(files)
    detail = " ".join(str(cause).split()) or type(cause).__name__
    names = ", ".join(map(str, files[:3])) + (" ..." if len(files) > 3 else "")
    return CdsbiasError(f"could not read {names} as {builder}: {detail}")


def _not_utf8(path: Path, bad: tuple[int, int]) -> CdsbiasError:
    return CdsbiasError(
        f"{path} is not UTF-8: invalid byte at offset {bad[0]} (line {bad[1]}); "
        "re-encode it as UTF-8 (e.g. iconv -t UTF-8)"
    )


def _empty_error(source: Any) -> CdsbiasError:
    if isinstance(source, list):
        source = ", ".join(map(str, source[:3])) + (" ..." if len(source) > 3 else "")
    return CdsbiasError(f"the corpus {source} has no documents; give a non-empty input")


def load_corpus(
    inputs: Sequence[str | os.PathLike] = (),
    *,
    dataset: str | None = None,
    config: str | None = None,
    split: str | None = None,
    text_column: str = "text",
    builder: str | None = None,
    text_option: str = "--text-column",
    streaming: bool = False,
    data_files: Sequence[str] | None = None,
) -> Any:
    """Loads a corpus as a ``datasets.Dataset`` (or opens it as an ``IterableDataset``
    when ``streaming``) and checks its text column.

    A stream is checked as thoroughly before its first document is used: every
    text/JSON/CSV file gets one pass over its raw bytes for UTF-8 (much cheaper than
    parsing, so a bad byte deep in a large corpus fails the run before it starts, not
    hours into it), and the text column is read from the first document.

    Args:
        inputs: Local files or globs of one kind (see ``INPUT_BUILDERS``).
        dataset: Instead of ``inputs``: a hub dataset id or a local dataset folder/script.
        config: The dataset's configuration name (``dataset`` only).
        split: The split to load (``dataset`` only; default ``train``).
        text_column: Column holding the documents; must be strings without nulls.
        builder: The ``load_dataset`` builder the ``inputs`` must be read with (``text``,
            ``json``, ``csv`` or ``parquet``); default: the one their extension implies.
        text_option: How the caller's user names the text column setting, for errors
            (``--text-column`` on the command line, ``text_column`` in a recipe).
        streaming: Open the corpus lazily; nothing is loaded into memory.
        data_files: Files (or globs) of ``dataset`` to read instead of all of it, as
            ``load_dataset``'s ``data_files`` (``dataset`` only).

    Returns:
        The documents, one row each (all columns of the corpus).

    Raises:
        CdsbiasError: Missing or unreadable input, empty corpus, bad text column.
    """
    corpus, source = _open(
        inputs, dataset, config, split, builder, streaming=streaming, data_files=data_files
    )
    if streaming:
        _check_first_document(corpus, source, text_column, text_option)
    else:
        check_text_column(corpus, text_column, source, text_option)
    return corpus


def _open(
    inputs: Sequence[str | os.PathLike],
    dataset: str | None,
    config: str | None,
    split: str | None,
    builder: str | None,
    *,
    streaming: bool,
    data_files: Sequence[str] | None = None,
) -> tuple[Any, Any]:
    """``load_dataset`` on local files or a dataset id, every failure one readable line.

    Returns:
        The corpus (a ``Dataset``, or an ``IterableDataset`` when ``streaming``) and what
        to call its source in errors.
    """
    import datasets

    if bool(inputs) == bool(dataset):
        raise CdsbiasError("give either input files or --dataset ID, not both or neither")
    if inputs and (config is not None or split is not None):
        raise CdsbiasError("--dataset-config and --split apply to --dataset only")
    if not inputs:
        selected = [str(f) for f in data_files] if data_files else None  # None: all of it
        try:
            corpus = datasets.load_dataset(
                dataset, name=config, data_files=selected, split=split or "train",
                streaming=streaming,
            )  # fmt: skip
        except (datasets.exceptions.DatasetsError, ValueError, FileNotFoundError) as exc:
            detail = " ".join(str(exc).split())
            raise CdsbiasError(f"could not load dataset '{dataset}': {detail}") from None
        except ConnectionError:
            raise CdsbiasError(
                f"could not load dataset '{dataset}': no connection to the Hugging Face Hub "
                "(a local folder works offline)"
            ) from None
        if not streaming and isinstance(corpus, datasets.IterableDataset):
            raise CdsbiasError(
                f"dataset '{dataset}' can only be streamed: train on it with streaming: true, "
                "or save it locally first"
            )
        return corpus, dataset
    inferred, files = expand_inputs(inputs)
    if builder is not None and inferred != builder:
        # Reading .csv with the json builder fails later with a parser message that
        # does not name the mismatch; say it here.
        raise CdsbiasError(
            f"{files[0]} holds {inferred} data, not {builder}; use {inferred} files "
            f"({', '.join(s for s, b in INPUT_BUILDERS.items() if b == inferred)}) "
            f"with dataset: {inferred}"
        )
    if all(path.stat().st_size == 0 for path in files):
        raise _empty_error(files)
    if streaming and inferred != "parquet":
        # A stream would meet a bad byte hours into a run; one pass over the raw bytes
        # (far cheaper than parsing) finds it before the run starts.
        for path in files:
            bad = first_invalid_utf8(path)
            if bad is not None:
                raise _not_utf8(path, bad)
    try:
        corpus = datasets.load_dataset(
            inferred, data_files=[str(p) for p in files], split="train", streaming=streaming
        )
    except (datasets.exceptions.DatasetsError, ValueError, StopIteration) as exc:
        raise _read_error(inferred, files, exc) from None
    return corpus, files


def check_text_column(
    corpus: Any, text_column: str, source: Any = "", text_option: str = "--text-column"
) -> None:
    """Raises a one-line error unless ``corpus`` is non-empty with a string ``text_column``.

    ``text_option`` names the setting that chooses the column in the error messages.
    """
    if text_column not in corpus.column_names:
        raise CdsbiasError(
            f"column '{text_column}' not found; the corpus has: {', '.join(corpus.column_names)} "
            f"(choose one with {text_option})"
        )
    if len(corpus) == 0:
        raise _empty_error(source)
    dtype = getattr(corpus.features[text_column], "dtype", None)
    if dtype not in ("string", "large_string"):
        raise CdsbiasError(
            f"column '{text_column}' holds {corpus.features[text_column]}, not text; "
            f"choose a string column with {text_option}"
        )
    nulls = corpus.data.column(text_column).null_count
    if nulls:
        raise CdsbiasError(
            f"column '{text_column}' has {nulls} empty (null) values; drop or fill them first"
        )


def collect_report(mapped: Any, id_column: str | None = None) -> Any:
    """Sums the ``REPORT_COLUMN`` of a ``CounterfactualMapper(report=True)`` output.

    Args:
        mapped: The mapped dataset.
        id_column: Column naming the documents in the report; default their position
            among the input documents (0, 1, ...).

    Returns:
        A ``SubstitutionReport`` with one entry per input document, as for GAP files.
    """
    import json

    from cdsbias.cds.corpus import REPORT_COLUMN
    from cdsbias.cds.report import SubstitutionReport

    report = SubstitutionReport()
    columns = [REPORT_COLUMN] + ([id_column] if id_column else [])
    index = 0
    for batch in mapped.select_columns(columns).iter(batch_size=10_000):
        for row, record in enumerate(batch[REPORT_COLUMN]):
            if not record:  # the added row of a cda pair; its document has the record
                continue
            substituted, pairs, kinds, unlisted, skipped = json.loads(record)
            key = str(batch[id_column][row]) if id_column else str(index)
            report.pairs.update(pairs)
            report.kinds.update(kinds)
            report.unlisted.update(unlisted)
            report.skipped.update(skipped)
            report.documents[key] = {
                "substituted": substituted,
                "substitutions": sum(pairs.values()),
            }
            index += 1
    return report


def write_corpus(corpus: Any, out: str | os.PathLike) -> None:
    """Writes ``corpus`` by ``out``'s extension: ``.jsonl``, ``.parquet`` or a folder.

    JSON lines keep non-ASCII text as is (``force_ascii=False``). The data goes to a
    temporary path beside ``out`` and is renamed into place, so a crash or an error leaves
    any earlier output intact.
    """
    from cdsbias.io import atomic_output_dir, atomic_path

    out = Path(out)
    kind = output_format(out)
    if kind == "folder":
        with atomic_output_dir(out) as staging:
            corpus.save_to_disk(str(staging))
        return
    with atomic_path(out) as tmp:
        if kind == "jsonl":
            corpus.to_json(str(tmp), lines=True, force_ascii=False)
        else:
            corpus.to_parquet(str(tmp))


def _check_first_document(corpus: Any, source: Any, text_column: str, text_option: str) -> None:
    """The stream's text column, read from its first document (a stream has no length and
    may not know its columns before reading)."""
    import datasets

    try:
        first = next(iter(corpus.take(1)), None)
    except (datasets.exceptions.DatasetsError, ValueError, StopIteration) as exc:
        if isinstance(source, list):
            kind = INPUT_BUILDERS[source[0].suffix.lower()]
            raise _read_error(kind, source, exc) from None
        raise CdsbiasError(f"could not read dataset '{source}': {exc}") from None
    if first is None:
        raise _empty_error(source)
    if text_column not in first:
        raise CdsbiasError(
            f"column '{text_column}' not found; the corpus has: {', '.join(first)} "
            f"(choose one with {text_option})"
        )
    if not isinstance(first[text_column], str):
        raise CdsbiasError(
            f"column '{text_column}' holds {type(first[text_column]).__name__} values, not "
            f"text; choose a string column with {text_option}"
        )


def document_key_column(column_names: Sequence[str], id_column: str | None) -> str | None:
    """The column that keys each document's seeded choices: ``id_column`` when given (an
    error when the corpus lacks it), else ``id`` when the corpus has one (as the training
    path keys its documents), else None (the text itself).

    Raises:
        CdsbiasError: ``id_column`` names no column of the corpus.
    """
    if id_column is not None and id_column not in column_names:
        raise CdsbiasError(
            f"--id-column '{id_column}' not found; the corpus has: {', '.join(column_names)}"
        )
    if id_column is None and "id" in column_names:
        return "id"
    return id_column
