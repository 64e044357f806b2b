"""Scoring the axis substitution rules on a hand-written gold set (race, religion, ...).

A gold file (``tests/assets/cds/gold_en_axes*.tsv``) has a header and five tab-separated
columns: ``phenomenon`` (``unchanged`` for rows where nothing may change), ``axis``,
``mapping`` (space-separated ``FROM>TO`` group pairs; groups not named keep their words),
``source`` and ``expected``. Scores are cdsbias.cds.gold's: sentence exact match and
changed-word accuracy per phenomenon; :func:`collateral_words` counts the words the rules
changed that the gold keeps.
"""

from __future__ import annotations

import re
from pathlib import Path

from cdsbias.axes import get_axis
from cdsbias.cds.axis_substitution import AxisSubstituter
from cdsbias.cds.edits import apply_edits
from cdsbias.cds.gold import UNCHANGED, GoldRow, GoldScore, score_row, tally
from cdsbias.cds.wordlists import data_lines
from cdsbias.errors import CdsbiasError

AXIS_GOLD_COLUMNS = ("phenomenon", "axis", "mapping", "source", "expected")
_WORDS = re.compile(r"\w+(?:['’]\w+)*")


def read_axis_gold(path: Path) -> list[tuple[str, str, GoldRow]]:
    """Rows of an axis gold file as ``(axis, mapping, GoldRow)``.

    Raises:
        CdsbiasError: ``file:line: problem`` for a wrong header or field count, or an
            ``unchanged`` row whose expected differs from its source.
    """
    lines = data_lines(Path(path))
    if not lines or tuple(lines[0][1].split("\t")) != AXIS_GOLD_COLUMNS:
        raise CdsbiasError(f"{path}:1: expected the header {' <TAB> '.join(AXIS_GOLD_COLUMNS)}")
    rows = []
    for number, line in lines[1:]:
        fields = line.split("\t")
        if len(fields) != len(AXIS_GOLD_COLUMNS):
            raise CdsbiasError(f"{path}:{number}: expected 5 fields, got {len(fields)}")
        phenomenon, axis, mapping, source, expected = fields
        if phenomenon == UNCHANGED and source != expected:
            raise CdsbiasError(f"{path}:{number}: an unchanged row must expect its source")
        rows.append((axis, mapping, GoldRow(phenomenon, source, expected)))
    return rows


def parse_mapping(axis_name: str, text: str) -> list[int]:
    """``"muslim>jewish christian>muslim"`` -> the group mapping list of the axis."""
    axis = get_axis(axis_name)
    mapping = list(range(axis.k))
    for pair in text.split():
        source, _, target = pair.partition(">")
        mapping[axis.groups.index(source)] = axis.groups.index(target)
    return mapping


def axis_gold_outputs(rows: list[tuple[str, str, GoldRow]]) -> list[str]:
    """The rules' output for each gold row."""
    substituters: dict[str, AxisSubstituter] = {}
    outputs = []
    for axis, mapping, row in rows:
        substituter = substituters.setdefault(axis, AxisSubstituter(get_axis(axis)))
        edits = substituter.edits(substituter.analyse(row.source), parse_mapping(axis, mapping))
        outputs.append(apply_edits(row.source, edits))
    return outputs


def score_axis_gold(rows: list[tuple[str, str, GoldRow]]) -> dict[str, GoldScore]:
    """One :class:`~cdsbias.cds.gold.GoldScore` per phenomenon and ``"all"``."""
    scores: dict[str, GoldScore] = {}
    total = GoldScore()
    for (_, _, row), output in zip(rows, axis_gold_outputs(rows), strict=True):
        tally(scores, total, row.phenomenon, score_row(row, output, {}))
    scores["all"] = total
    return scores


def collateral_words(rows: list[tuple[str, str, GoldRow]], outputs: list[str]) -> list[str]:
    """Words the rules changed although the gold keeps them, as ``"source word -> output
    word"``: a word of the source that the expected sentence has at the same place but the
    output does not (sentences whose words do not line up are compared word by word up to
    the shorter)."""
    found = []
    for (_, _, row), output in zip(rows, outputs, strict=True):
        source, expected, produced = (_WORDS.findall(t) for t in (row.source, row.expected, output))
        for old, kept, new in zip(source, expected, produced, strict=False):
            if old == kept and new != old:
                found.append(f"{old} -> {new}")
    return found
