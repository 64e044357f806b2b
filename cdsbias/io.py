"""Crash-safe output: nothing the user already has is lost or left half-written."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


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
