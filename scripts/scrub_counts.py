"""What Bias in Bios' ``scrub: true`` deletes from real biographical text, counted.

Usage:
    python scripts/scrub_counts.py [--data-dir ../shared/data] [--top 25]

Runs :func:`cdsbias.downstream.bias_in_bios.scrub` over the Text column of all of GAP
(development + test + validation: 4,454 Wikipedia passages about people) and counts the
words it deletes: De-Arteaga et al.'s eleven (he, she, her, his, him, hers, himself,
herself, mr, mrs, ms), the given names, and the other gendered words, with the most
frequent of each. docs/downstream.md ("Scrubbing") quotes its output.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

from cdsbias.cds import read_gap
from cdsbias.downstream.bias_in_bios import deleted_spans

REPO = Path(__file__).resolve().parents[1]
SPLITS = ("development", "test", "validation")
#: De-Arteaga et al.'s words (microsoft/biosbias, preprocess.py).
ELEVEN = frozenset(
    ["he", "she", "her", "his", "him", "hers", "himself", "herself", "mr", "mrs", "ms"]
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_data = Path(os.environ.get("CDSBIAS_SHARED_DATA", REPO.parent / "shared" / "data"))
    parser.add_argument("--data-dir", type=Path, default=default_data)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    folder = args.data_dir / "gap-coreference"
    texts = [row["Text"] for split in SPLITS for row in read_gap(folder / f"gap-{split}.tsv").rows]
    counts: dict[str, Counter[str]] = {"eleven": Counter(), "names": Counter(), "other": Counter()}
    for text in texts:
        for edit in deleted_spans(text):
            word = edit.original
            kind = (
                "eleven" if word.lower() in ELEVEN else "names" if edit.kind == "name" else "other"
            )
            counts[kind][word if kind == "names" else word.lower()] += 1
    words = sum(len(text.split()) for text in texts)
    total = sum(sum(c.values()) for c in counts.values())
    print(f"{len(texts)} GAP texts, {words} words; {total} deleted ({total / words:.1%})")
    for kind, counter in counts.items():
        top = ", ".join(f"{w} {n}" for w, n in counter.most_common(args.top))
        print(f"{kind}: {sum(counter.values())} ({len(counter)} distinct): {top}")


if __name__ == "__main__":
    main()
