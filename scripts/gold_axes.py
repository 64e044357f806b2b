"""Prints the English axis-substitution rules' gold-set scores (the table of docs/axes.md).

Usage:
    python scripts/gold_axes.py [--failures]

Scores the development set ``tests/assets/cds/gold_en_axes.tsv`` and the held-out sets
``gold_en_axes_heldout.tsv`` and ``gold_en_axes_people_heldout.tsv`` (issue 37's classes)
separately with cdsbias.cds.axis_gold (sentence exact match and changed-word accuracy per
phenomenon, and the words changed that the gold keeps); ``--failures`` lists the rows the
rules get wrong, with their output.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cdsbias.cds.axis_gold import (
    axis_gold_outputs,
    collateral_words,
    read_axis_gold,
    score_axis_gold,
)
from cdsbias.cds.gold import format_scores

ASSETS = Path(__file__).resolve().parents[1] / "tests" / "assets" / "cds"
SETS = {
    "development": "gold_en_axes.tsv",
    "held-out": "gold_en_axes_heldout.tsv",
    "held-out, issue 37's classes": "gold_en_axes_people_heldout.tsv",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--failures", action="store_true", help="list the rows the rules miss")
    args = parser.parse_args()
    for name, file in SETS.items():
        rows = read_axis_gold(ASSETS / file)
        print(f"\n{name} ({file}, {len(rows)} sentences)\n")
        print(format_scores(score_axis_gold(rows)))
        outputs = axis_gold_outputs(rows)
        collateral = collateral_words(rows, outputs)
        print(f"\nwords changed that the gold keeps: {len(collateral)} {collateral or ''}")
        if args.failures:
            for (axis, mapping, row), output in zip(rows, outputs, strict=True):
                if output != row.expected:
                    print(f"- [{axis} {mapping}] {row.source}\n  got:      {output}\n"
                          f"  expected: {row.expected}")  # fmt: skip


if __name__ == "__main__":
    main()
