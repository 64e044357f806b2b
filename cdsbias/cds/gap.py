"""Counterfactual GAP files: swap the Text and re-derive every span column.

A GAP row has the pronoun and the two candidate names as strings plus character offsets
into Text. After substitution, each span is mapped through the edits
(cdsbias.cds.edits.map_offset) and the field is re-read from the new text, so
``Text[offset:offset + len(field)] == field`` holds for every row by construction (and is
checked again before writing). Coreference labels and URL are kept; the ID of every
counterfactual row gets the suffix ``COUNTERFACTUAL_SUFFIX``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cdsbias.cds.corpus import DEFAULT_PROBABILITY, should_substitute, validate_settings
from cdsbias.cds.edits import Edit, apply_edits, map_offset
from cdsbias.cds.languages.base import Language
from cdsbias.cds.report import SubstitutionReport
from cdsbias.errors import CdsbiasError

GAP_COLUMNS = (
    "ID",
    "Text",
    "Pronoun",
    "Pronoun-offset",
    "A",
    "A-offset",
    "A-coref",
    "B",
    "B-offset",
    "B-coref",
    "URL",
)
SPAN_COLUMNS = (("Pronoun", "Pronoun-offset"), ("A", "A-offset"), ("B", "B-offset"))
COUNTERFACTUAL_SUFFIX = "-cf"


@dataclass
class GapTable:
    """A GAP file as read: header and rows of strings (columns in file order)."""

    header: list[str]
    rows: list[dict[str, str]]


def parse_gap(text: str, source: str = "<input>") -> GapTable:
    """Parses GAP TSV text (no quoting: GAP texts contain no tabs or newlines).

    Raises:
        CdsbiasError: Empty input, missing columns, a row with the wrong number of fields,
            a non-integer offset, or a span that does not match its offset.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines or not lines[0].strip():
        raise CdsbiasError(f"{source} is empty; expected a GAP TSV with a header row")
    header = lines[0].split("\t")
    missing = [column for column in GAP_COLUMNS if column not in header]
    if missing:
        raise CdsbiasError(f"{source} is missing GAP column(s): {', '.join(missing)}")
    if len(lines) == 1:
        raise CdsbiasError(f"{source} has a header but no rows")
    rows = []
    for line_number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != len(header):
            raise CdsbiasError(
                f"{source}:{line_number}: expected {len(header)} tab-separated fields, "
                f"got {len(fields)}"
            )
        row = dict(zip(header, fields, strict=True))
        for column, offset_column in SPAN_COLUMNS:
            try:
                offset = int(row[offset_column])
            except ValueError:
                raise CdsbiasError(
                    f"{source}:{line_number}: {offset_column} '{row[offset_column]}' is not an "
                    "integer"
                ) from None
            if row["Text"][offset : offset + len(row[column])] != row[column]:
                raise CdsbiasError(
                    f"{source}:{line_number}: {column} '{row[column]}' is not at "
                    f"{offset_column} {offset} in Text"
                )
        rows.append(row)
    return GapTable(header=header, rows=rows)


def read_gap(path: Path) -> GapTable:
    """Reads and validates a GAP TSV file (UTF-8 required)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CdsbiasError(f"{path} not found") from None
    except IsADirectoryError:
        raise CdsbiasError(f"{path} is a folder, not a GAP TSV file") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_number = data[: exc.start].count(b"\n") + 1
        raise CdsbiasError(
            f"{path}:{line_number}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start})"
        ) from None
    return parse_gap(text.removeprefix("\ufeff"), source=str(path))


def format_gap(table: GapTable) -> str:
    """Serialises a table back to GAP TSV (LF line ends, trailing newline)."""
    lines = ["\t".join(table.header)]
    lines.extend("\t".join(row[column] for column in table.header) for row in table.rows)
    return "\n".join(lines) + "\n"


def counterfactual_row(row: dict[str, str], edits: list[Edit]) -> dict[str, str]:
    """Applies ``edits`` to the row's Text and re-derives every span and offset."""
    text = row["Text"]
    new_text = apply_edits(text, edits)
    new_row = dict(row)
    new_row["Text"] = new_text
    for column, offset_column in SPAN_COLUMNS:
        start = int(row[offset_column])
        end = start + len(row[column])
        new_start = map_offset(edits, start)
        new_end = map_offset(edits, end, is_end=True)
        new_row[column] = new_text[new_start:new_end]
        new_row[offset_column] = str(new_start)
    new_row["ID"] = row["ID"] + COUNTERFACTUAL_SUFFIX
    return new_row


def check_offsets(row: dict[str, str]) -> list[str]:
    """Returns the span columns whose text does not sit at their offset (empty if valid)."""
    text = row["Text"]
    return [
        column
        for column, offset_column in SPAN_COLUMNS
        if text[int(row[offset_column]) : int(row[offset_column]) + len(row[column])] != row[column]
    ]


def counterfactual_gap(
    table: GapTable,
    substituter: Language,
    *,
    mode: str = "cds",
    probability: float = DEFAULT_PROBABILITY,
    seed: int = 0,
) -> tuple[GapTable, SubstitutionReport]:
    """Builds the CDS or CDA version of a GAP table.

    Args:
        table: Parsed GAP rows.
        substituter: The language's rules (``CounterfactualSubstituter()`` for English).
        mode: ``"cds"`` (each row substituted with ``probability``) or ``"cda"`` (each row
            followed by its counterfactual).
        probability: CDS probability in [0, 1].
        seed: Seed of the per-row coins (keyed by the row ID).

    Returns:
        The new table and the substitution report.
    """
    validate_settings(mode, probability)
    texts = [row["Text"] for row in table.rows]
    if mode == "cds":
        chosen = [should_substitute(seed, row["ID"], probability) for row in table.rows]
    else:
        chosen = [True] * len(table.rows)
    chosen_texts = [text for text, flag in zip(texts, chosen, strict=True) if flag]
    chosen_skips: list = []
    chosen_edits = iter(substituter.edits_many(chosen_texts, skipped=chosen_skips))
    skips = iter(chosen_skips)
    report = SubstitutionReport()
    rows = []
    for row, flag in zip(table.rows, chosen, strict=True):
        edits = next(chosen_edits) if flag else []
        report.add(
            row["ID"],
            row["Text"],
            edits,
            substituted=flag,
            language=substituter,
            skipped=next(skips) if flag else [],
        )
        if not flag:
            rows.append(row)
            continue
        new_row = counterfactual_row(row, edits)
        broken = check_offsets(new_row)
        if broken:  # cannot happen by construction; refuse to write a corrupt file
            raise CdsbiasError(
                f"internal error: offsets of {', '.join(broken)} broken in {row['ID']}"
            )
        if mode == "cda":
            rows.append(row)
        rows.append(new_row)
    return GapTable(header=table.header, rows=rows), report
