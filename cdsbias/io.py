"""Crash-safe output: nothing the user already has is lost or left half-written; and a
user's damaged weights, JSON or CSV file named in one line."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from cdsbias.errors import CdsbiasError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yields a temporary file path beside ``path`` that replaces it only on success.

    Whatever writes the file (``open``, ``Dataset.to_parquet``, ...) writes the temporary
    path; a reader (or a crash) sees either the old file or the complete new one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        # mkstemp creates 0600: give the file the permissions a plain open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Writes ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding=encoding, newline="") as handle:
        handle.write(text)


@contextlib.contextmanager
def atomic_output_dir(final_dir: str | os.PathLike) -> Iterator[Path]:
    """Yields a staging folder that replaces ``final_dir`` only if the block succeeds.

    On an exception the staging folder is removed and ``final_dir`` is untouched, so a
    failed run never leaves a half-written result beside a good old one.
    """
    final_dir = Path(final_dir)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final_dir.name}.", dir=final_dir.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    os.chmod(staging, 0o777 & ~_umask())  # mkdtemp creates 0700; a plain mkdir would not
    backup = None
    if final_dir.exists():
        backup = final_dir.with_name(f".{final_dir.name}.old-{os.getpid()}")
        os.replace(final_dir, backup)
    os.replace(staging, final_dir)
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)


#: The flag of every command that writes results: replace what an earlier run wrote there.
OVERWRITE_FLAG = "--overwrite"


def check_output(
    path: str | os.PathLike,
    *,
    flag: str = "--out",
    folder: bool | None = None,
    overwrite: bool = False,
) -> None:
    """Refuses an output path that cannot be written, or that holds earlier results.

    Every command that writes results checks each path it will write with this, before
    reading any input, so a refusal leaves everything as it was. Written atomically
    (:func:`atomic_path`, :func:`atomic_output_dir`), an output replaces what was there:
    that is allowed only with ``overwrite`` (the command's ``--overwrite``).

    Args:
        path: The file or folder the command will write.
        flag: The option that named it (or the one that chose a folder above it).
        folder: True: ``path`` must be a folder (or not exist); False: a file; None: either.
        overwrite: Whether earlier results at ``path`` may be replaced. An empty folder is
            never refused.

    Raises:
        CdsbiasError: One line naming the path, the problem and the fix.
    """
    path = Path(path)
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise CdsbiasError(
                    f"{flag}: {parent} is a file, so {path} cannot be written inside it; "
                    f"choose another {flag}."
                )
            break
    if not path.exists():
        return
    if folder is True and not path.is_dir():
        raise CdsbiasError(
            f"{flag} {path} is a file, not a folder; give a new folder (or an empty one)."
        )
    if folder is False and path.is_dir():
        raise CdsbiasError(f"{flag} {path} is a folder; give a file name that is not one.")
    if overwrite or (path.is_dir() and not any(path.iterdir())):
        return
    raise CdsbiasError(
        f"{path} already exists and holds earlier results; nothing was written. Choose "
        f"another {flag}, or pass {OVERWRITE_FLAG} to replace it."
    )


def check_safetensors(path: str | os.PathLike, *, fix: str) -> None:
    """Refuses a ``*.safetensors`` file that is cut short or damaged, naming it.

    Reads the header and checks that the file holds every byte it announces (safetensors'
    own check), without reading the tensors. A folder is checked file by file (its
    top-level ``*.safetensors`` files).

    Args:
        path: A safetensors file, or a folder of them.
        fix: What the user can do, ending the message (``"...; {fix}."``).

    Raises:
        CdsbiasError: A file that safetensors cannot open, named with its problem.
    """
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
    for file in files:
        try:
            with safe_open(str(file), "np"):
                pass
        except (SafetensorError, OSError) as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CdsbiasError(f"{file} is damaged or cut short ({detail}); {fix}.") from None


def check_json_files(folder: str | os.PathLike, *, fix: str) -> None:
    """Refuses a folder whose top-level ``*.json`` files (a model's config and tokenizer
    files, a checkpoint's trainer state) do not all parse, naming the first that does not.

    Raises:
        CdsbiasError: ``"<file> cannot be read (<why>); {fix}."``
    """
    import json

    for path in sorted(Path(folder).glob("*.json")):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            detail = str(exc).strip().splitlines()[0]
            raise CdsbiasError(f"{path} cannot be read ({detail}); {fix}.") from None


def read_yaml_mapping(path: str | os.PathLike, label: str, *, empty_ok: bool) -> dict:
    """A YAML file of ``key: value`` (a recipe, a study spec).

    Args:
        path: The file.
        label: What it is, starting each message (``Recipe``, ``study spec``).
        empty_ok: Whether an empty file reads as ``{}`` (else it is not a mapping).

    Raises:
        CdsbiasError: ``"<label> <path> does not exist."``, not UTF-8 (:func:`read_utf8`),
            ``"... is not valid YAML: <the parser's first line>"`` or ``"... must be a
            mapping of key: value."``
    """
    import yaml

    path = Path(path)
    if not path.is_file():
        raise CdsbiasError(f"{label} {path} does not exist.")
    text = read_utf8(path, fix=f"save the {label.lower()} as UTF-8")
    try:
        values = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CdsbiasError(f"{label} {path} is not valid YAML: {exc}".splitlines()[0]) from None
    if values is None and empty_ok:
        return {}
    if not isinstance(values, dict):
        raise CdsbiasError(f"{label} {path} must be a mapping of key: value.")
    return values


def read_utf8(path: str | os.PathLike, *, fix: str = "save it as UTF-8") -> str:
    """The text of a user's data file: UTF-8, a leading byte-order mark dropped (as
    spreadsheet programs write one).

    Raises:
        CdsbiasError: ``"<file> is not UTF-8 text (<why> at byte N); {fix}."``
    """
    try:
        return Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CdsbiasError(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); {fix}."
        ) from None


def read_csv(
    path: str | os.PathLike, *, fix: str = "save it as UTF-8"
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and rows of a comma-separated file, each row with its line number.

    Blank lines are skipped. A row with fewer or more fields than the header (cut short,
    or an unquoted comma) is refused, naming its line, where ``csv.DictReader`` would give
    ``None`` for the missing fields.

    Args:
        path: The file.
        fix: What to do about a file that is not UTF-8 (the message's end).

    Raises:
        CdsbiasError: Not UTF-8 (:func:`read_utf8`), or ``"<file>:<line>: N fields, the
            header has M ..."``.
    """
    import csv
    import io

    reader = csv.reader(io.StringIO(read_utf8(path, fix=fix), newline=""))
    header = [name.strip() for name in next(reader, [])]
    rows = []
    start = reader.line_num + 1
    for record in reader:
        line, start = start, reader.line_num + 1
        if not any(field.strip() for field in record):
            continue
        if len(record) != len(header):
            raise CdsbiasError(
                f"{path}:{line}: {len(record)} field(s), the header has {len(header)} "
                f"({','.join(header)}); complete the row (or quote a field holding a comma)."
            )
        rows.append((line, dict(zip(header, record, strict=True))))
    return header, rows
