"""Kurita word lists: the packaged attribute sets, templates and tests, or a user's file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from cdsbias.errors import CdsbiasError
from cdsbias.io import read_utf8
from cdsbias.resources import read_text


def _resource_table(filename: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """One of the packaged Kurita TSV files as a frame (header checked by ``_read_tsv``)."""
    source = f"resources/kurita/{filename}"
    rows = [fields for _, fields in _read_tsv(read_text("kurita", filename), source, columns)]
    return pd.DataFrame(rows, columns=list(columns))


def _read_tsv(text: str, source: str, columns: Sequence[str]) -> list[tuple[int, list[str]]]:
    """Tab-separated rows (after a header) with their 1-based line numbers; strict width."""
    rows = []
    lines = text.splitlines()
    if not lines or [c.strip() for c in lines[0].split("\t")] != list(columns):
        raise CdsbiasError(f"{source}:1: expected the header {' | '.join(columns)}.")
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != len(columns) or not all(fields):
            raise CdsbiasError(
                f"{source}:{number}: expected {len(columns)} non-empty tab-separated fields "
                f"({', '.join(columns)}), got {line!r}."
            )
        rows.append((number, fields))
    return rows


def load_word_lists(
    attributes_file: str | Path | None = None,
) -> tuple[dict[str, list[str]], pd.DataFrame, pd.DataFrame]:
    """Reads ``(attribute sets, templates, tests)`` from the package data.

    Args:
        attributes_file: A ``set<TAB>word`` file replacing the packaged attribute lists.
    """
    if attributes_file is not None:
        path = Path(attributes_file)
        if not path.is_file():
            raise CdsbiasError(f"Attribute file {path} not found.")
        attr_text, attr_source = read_utf8(path), str(path)
    else:
        attr_text = read_text("kurita", "attributes.tsv")
        attr_source = "resources/kurita/attributes.tsv"
    sets: dict[str, list[str]] = {}
    for _, (name, word) in _read_tsv(attr_text, attr_source, ("set", "word")):
        sets.setdefault(name, []).append(word)
    templates = _resource_table(
        "templates.tsv", ("targets", "template", "first_words", "second_words")
    )
    return sets, templates, packaged_tests()


def packaged_tests() -> pd.DataFrame:
    """The packaged tests: name, target words (gender or a control) and attribute sets."""
    return _resource_table("tests.tsv", ("test", "targets", "attribute_x", "attribute_y"))
