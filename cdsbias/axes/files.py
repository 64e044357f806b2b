"""Reading an axis from a file: the shipped TSVs and a user's JSON or TSV.

Two shapes are read:

* **JSON, bias-bench's** ``data/bias_attribute_words.json`` (Meade et al. 2022):
  ``{"race": [["black", "caucasian", "asian"], ...], ...}``. A file with one key is that
  axis; with several, name the key after ``#`` (``words.json#race``). The groups are named
  after the first tuple's words, since the format has no group names.
* **TSV** with a header that names the groups, one column per group, and an optional last
  column ``form`` (``adjective``, ``noun``, ``plural`` or ``other``, for CDS agreement;
  cdsbias.axes.base.TUPLE_FORMS). ``#`` starts a comment line; blank lines are skipped.

Every problem is one ``file[:line]: problem`` error naming the fix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cdsbias.axes.base import BiasAxis
from cdsbias.errors import CdsbiasError

#: The files an attribute set may come in.
SUFFIXES = (".json", ".tsv")


def split_reference(reference: str) -> tuple[Path, str | None]:
    """``"words.json#race"`` -> ``(Path("words.json"), "race")``; no ``#``: key None."""
    path, _, key = str(reference).partition("#")
    return Path(path), (key or None)


def _read_text(path: Path) -> str:
    try:
        # utf-8-sig: a spreadsheet's byte-order mark would otherwise start the first group.
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CdsbiasError(f"Attribute file {path} not found") from None
    except IsADirectoryError:
        raise CdsbiasError(
            f"Attribute file {path} is a folder; give a .json or .tsv file"
        ) from None
    except OSError as exc:
        raise CdsbiasError(f"Attribute file {path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise CdsbiasError(f"{path}:{line}: not valid UTF-8") from None


def _word(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CdsbiasError(f"{where}: {value!r} is not a word")
    return value.strip().lower()


def read_json_axis(path: Path, key: str | None = None, **metadata: object) -> BiasAxis:
    """An axis from bias-bench's JSON shape (see the module docstring)."""
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise CdsbiasError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or not data:
        raise CdsbiasError(
            f'{path}: expected bias-bench\'s shape {{"axis": [["word_group1", "word_group2", '
            "...], ...]}"
        )
    if key is None:
        if len(data) > 1:
            raise CdsbiasError(
                f"{path} holds several axes ({', '.join(data)}); name one: "
                f"{path}#{next(iter(data))}"
            )
        key = next(iter(data))
    if key not in data:
        raise CdsbiasError(f"{path} has no axis '{key}'; it has {', '.join(data)}")
    entries = data[key]
    if not isinstance(entries, list) or not entries:
        raise CdsbiasError(f"{path}: '{key}' is not a non-empty list of word tuples")
    tuples = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, list):
            raise CdsbiasError(f"{path}: {key} tuple {number} is {entry!r}, not a list of words")
        tuples.append(tuple(_word(w, f"{path}: {key} tuple {number}") for w in entry))
    return BiasAxis(
        name=key,
        groups=tuples[0],
        tuples=tuple(tuples),
        source=f"{path}#{key}",
        **metadata,  # type: ignore[arg-type]
    )


def read_tsv_axis(path: Path, name: str | None = None, **metadata: object) -> BiasAxis:
    """An axis from a TSV whose header names the groups (see the module docstring)."""
    rows = [
        (number, line.rstrip("\r"))
        for number, line in enumerate(_read_text(path).split("\n"), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not rows:
        raise CdsbiasError(f"{path}: empty; expected a header of group names, then word tuples")
    header_line, header = rows[0]
    columns = [column.strip() for column in header.split("\t")]
    has_form = columns[-1].lower() == "form"
    groups = tuple(column.lower() for column in (columns[:-1] if has_form else columns))
    if len(groups) < 2 or not all(groups):
        raise CdsbiasError(
            f"{path}:{header_line}: the first line must name the groups, one per tab-separated "
            f"column (e.g. 'jewish<TAB>christian<TAB>muslim'), got {header!r}"
        )
    tuples, forms = [], []
    for number, line in rows[1:]:
        fields = [part.strip() for part in line.split("\t")]
        width = len(groups) + has_form
        if len(fields) != width:
            raise CdsbiasError(
                f"{path}:{number}: {len(fields)} tab-separated field(s); the header has "
                f"{width} ({', '.join(columns)})"
            )
        tuples.append(tuple(_word(w, f"{path}:{number}") for w in fields[: len(groups)]))
        forms.append((fields[-1] or None) if has_form else None)
    if not tuples:
        raise CdsbiasError(f"{path}: a header but no word tuples")
    try:
        return BiasAxis(
            name=name or path.stem,
            groups=groups,
            tuples=tuple(tuples),
            forms=tuple(forms) if has_form else (),
            source=str(path),
            **metadata,  # type: ignore[arg-type]
        )
    except CdsbiasError as exc:
        # Point at the line: "tuple N" counts the data lines after the header.
        raise CdsbiasError(_with_line(str(exc), rows)) from None


def _with_line(message: str, rows: list[tuple[int, str]]) -> str:
    """``"f.tsv: tuple 3 ..."`` -> ``"f.tsv:5: tuple 3 ..."`` (tuple N is data row N)."""
    match = re.search(r": tuple (\d+)", message)
    if match is None or not 0 < int(match.group(1)) < len(rows):
        return message
    line = rows[int(match.group(1))][0]
    return f"{message[: match.start()]}:{line}{message[match.start() :]}"


def read_axis_file(reference: str, **metadata: object) -> BiasAxis:
    """An axis from ``FILE.json[#key]`` or ``FILE.tsv``.

    Raises:
        CdsbiasError: An unknown suffix, a missing, empty or malformed file, tuples of
            unequal length, or a word listed under two groups.
    """
    path, key = split_reference(reference)
    metadata.setdefault("word_lists", "file")  # a user's own lists, whatever their origin
    if path.suffix.lower() == ".json":
        return read_json_axis(path, key, **metadata)
    if path.suffix.lower() == ".tsv":
        if key is not None:
            raise CdsbiasError(f"{reference}: '#{key}' picks a JSON key; a TSV holds one axis")
        return read_tsv_axis(path, **metadata)
    raise CdsbiasError(
        f"Attribute file {path}: expected a .json file in bias-bench's shape or a .tsv with a "
        "header of group names"
    )
