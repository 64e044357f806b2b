"""Prints each CDS language's gold-set scores per phenomenon (the tables of docs/cds.md).

Usage:
    python scripts/gold_cds.py [--language da] [--failures]
    python scripts/gold_cds.py --forms neutral [--failures]

Scores every registered language that has ``tests/assets/cds/gold_<code>.tsv`` with
cdsbias.cds.gold (sentence exact match and changed-word accuracy); ``--failures`` also
lists the rows the rules get wrong, with their output. ``--forms neutral`` scores English
gender-neutral rewriting instead: the development set ``gold_en_neutral.tsv`` and the
held-out ``gold_en_neutral_heldout.tsv`` separately (exact-sentence rate and word error
rate on the sentences with gendered words, changed ``unchanged`` sentences).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cdsbias.cds import LANGUAGES, get_language
from cdsbias.cds.forms import GenderForms, neutral_language
from cdsbias.cds.gold import (
    format_scores,
    name_genders,
    read_gold,
    rewrite_figures,
    score_gold,
    score_row,
)

GOLD = Path(__file__).resolve().parents[1] / "tests" / "assets" / "cds"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--language", action="append", help="only these codes")
    parser.add_argument("--failures", action="store_true", help="list the wrong rows")
    parser.add_argument("--forms", choices=("binary", "neutral"), default="binary")
    args = parser.parse_args()
    if args.forms == "neutral":
        neutral_gold(args.failures)
        return
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


def neutral_gold(failures: bool) -> None:
    """Prints English neutral rewriting's figures on the development and held-out sets."""
    language = neutral_language("en", GenderForms("neutral"))
    print("| set | sentences with gendered words | exact | WER | unchanged rows changed |")
    print("|---|---:|---:|---:|---:|")
    wrong = []
    for name in ("gold_en_neutral.tsv", "gold_en_neutral_heldout.tsv"):
        rows = read_gold(GOLD / name)
        f = rewrite_figures(language, rows)
        print(
            f"| {name} | {f['sentences']} | {f['exact']}/{f['sentences']} "
            f"({f['exact_rate']:.1%}) | {f['errors']}/{f['words']} ({f['wer']:.2%}) | "
            f"{f['unchanged_changed']}/{f['unchanged']} |"
        )
        wrong += [(name, row, language.substitute(row.source)) for row in rows]
    if failures:
        print()
        for name, row, output in wrong:
            if output != row.expected:
                print(f"- {name} {row.phenomenon}: {row.source} -> {output} (gold: {row.expected})")


if __name__ == "__main__":
    main()
