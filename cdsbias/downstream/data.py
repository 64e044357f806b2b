"""Reading a downstream task's splits: the hub dataset (``datasets``) or local files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from cdsbias.errors import CdsbiasError

#: File endings a local split may have, in the order they are looked for.
SPLIT_SUFFIXES = (".jsonl", ".csv", ".parquet")


def find_split_file(folder: Path, split: str, option: str = "--data") -> Path:
    """``folder/<split>.jsonl|.csv|.parquet`` (exactly one of them); ``option`` is where
    the user named ``folder`` (``--data``, or a recipe's ``downstream_tasks`` key).

    Raises:
        CdsbiasError: None or several found; the message lists the names looked for.
    """
    found = [folder / f"{split}{suffix}" for suffix in SPLIT_SUFFIXES]
    found = [path for path in found if path.is_file()]
    names = ", ".join(f"{split}{s}" for s in SPLIT_SUFFIXES)
    if not folder.is_dir():
        raise CdsbiasError(f"{option} {folder} is not a folder; give one holding {names}.")
    if not found:
        raise CdsbiasError(f"{folder} has no {split} split; add one of {names}.")
    if len(found) > 1:
        raise CdsbiasError(
            f"{folder} has {len(found)} {split} files ({', '.join(p.name for p in found)}); "
            "keep one."
        )
    return found[0]


def read_table(path: Path) -> pd.DataFrame:
    """A ``.jsonl``, ``.csv`` or ``.parquet`` file as a frame.

    Raises:
        CdsbiasError: An unreadable file (the parser's first line).
    """
    try:
        if path.suffix == ".jsonl":
            return pd.read_json(path, lines=True)
        if path.suffix == ".csv":
            return pd.read_csv(path)
        return pd.read_parquet(path)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CdsbiasError(f"Cannot read {path}: {detail}.") from None


def load_local_splits(
    folder: Path, splits: Sequence[str], option: str = "--data"
) -> dict[str, tuple[str, pd.DataFrame]]:
    """``{split: (file name, frame)}`` read from ``folder`` (every file found first)."""
    paths = {split: find_split_file(Path(folder), split, option) for split in splits}
    return {split: (str(path), read_table(path)) for split, path in paths.items()}


def load_hub_splits(
    path: str, config: str | None, splits: Mapping[str, str], task: str
) -> dict[str, tuple[str, pd.DataFrame]]:
    """``{split: (description, frame)}`` from :func:`datasets.load_dataset`.

    Raises:
        CdsbiasError: The dataset cannot be loaded (offline, unknown); the fix is
            ``--data DIR`` with local files.
    """
    import datasets

    shown = f"{path}" + (f"/{config}" if config else "")
    try:
        loaded = datasets.load_dataset(path, config)
    except Exception as exc:  # datasets raises many kinds; each means "cannot load"
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CdsbiasError(
            f"Cannot load the hub dataset {shown} for {task} ({detail}); pass --data DIR "
            "with train and test files (.jsonl, .csv or .parquet) instead."
        ) from None
    out = {}
    for ours, theirs in splits.items():
        if theirs not in loaded:
            raise CdsbiasError(f"The hub dataset {shown} has no '{theirs}' split.")
        out[ours] = (f"{shown} [{theirs}]", loaded[theirs].to_pandas())
    return out


def require_columns(
    frame: pd.DataFrame, needed: Iterable[str], where: str, task: str, option: str = "--data"
) -> None:
    """Refuses a split without one of ``needed``; the error lists the columns it has.

    Raises:
        CdsbiasError: ``<file> has no column 'x' (task needs a, b, c); its columns: ...``.
    """
    needed = list(needed)
    missing = [column for column in needed if column not in frame.columns]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise CdsbiasError(
            f"{where} has no column{plural} {', '.join(repr(m) for m in missing)} "
            f"({task} needs {', '.join(needed)}); its columns: "
            f"{', '.join(map(str, frame.columns)) or 'none'}. Rename the columns or give "
            f"the right {option} folder."
        )
