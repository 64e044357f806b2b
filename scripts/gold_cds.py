"""Prints each CDS language's gold-set scores per phenomenon (the tables of docs/cds.md).

Usage:
    python scripts/gold_cds.py [--language da] [--failures]

Scores every registered language that has ``tests/assets/cds/gold_<code>.tsv`` with
cdsbias.cds.gold (sentence exact match and changed-word accuracy); ``--failures`` also
lists the rows the rules get wrong, with their output.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cdsbias.cds import LANGUAGES, get_language
from cdsbias.cds.gold import format_scores, name_genders, read_gold, score_gold, score_row

GOLD = Path(__file__).resolve().parents[1] / "tests" / "assets" / "cds"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--language", action="append", help="only these codes")
    parser.add_argument("--failures", action="store_true", help="list the wrong rows")
    args = parser.parse_args()
    for code in args.language or list(LANGUAGES):
        path = GOLD / f"gold_{code}.tsv"
        if not path.is_file():
            continue
        language, rows = get_language(code), read_gold(path)
        print(f"## {language.name} ({code}): {len(rows)} sentences\n")
        print(format_scores(score_gold(language, rows)) + "\n")
        if args.failures:
            genders = name_genders(code)
            for row in rows:
                output = language.substitute(row.source)
                if not score_row(row, output, genders)[0]:
                    print(f"- {row.phenomenon}: {row.source} -> {output} (gold: {row.expected})")
            print()


if __name__ == "__main__":
    main()
