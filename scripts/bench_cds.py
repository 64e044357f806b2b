"""Measures the CDS engine's speed (words per second, one core) on all of GAP.

Usage:
    python scripts/bench_cds.py [--data-dir ../shared/data] [--repeats 3] [--no-names]

Words are whitespace-separated tokens of the GAP Text column (dev + test + validation).
The rule-based path is always measured; the spaCy path only when spaCy and the model are
installed (``pip install 'cdsbias[spacy]'`` and ``python -m spacy download en_core_web_sm``).
Issue #3 asks for >= 200,000 words/s per core on the rule-based path.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from cdsbias.cds import build_substituter, read_gap
from cdsbias.cds.spacy_analysis import DEFAULT_SPACY_MODEL, spacy_available

REPO = Path(__file__).resolve().parents[1]
SPLITS = ("development", "test", "validation")


def load_texts(data_dir: Path) -> list[str]:
    """Returns the Text column of the three GAP files."""
    texts = []
    for split in SPLITS:
        texts.extend(row["Text"] for row in read_gap(data_dir / f"gap-{split}.tsv").rows)
    return texts


def words_per_second(substituter, texts: list[str], repeats: int) -> tuple[float, float]:
    """Returns (best words/s over ``repeats`` runs, seconds of the best run)."""
    words = sum(len(text.split()) for text in texts)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        substituter.substitute_many(texts)
        best = min(best, time.perf_counter() - started)
    return words / best, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = Path(os.environ.get("CDSBIAS_SHARED_DATA", REPO.parent / "shared" / "data"))
    parser.add_argument("--data-dir", type=Path, default=default_data)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-names", dest="names", action="store_false")
    parser.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    args = parser.parse_args()

    texts = load_texts(args.data_dir / "gap-coreference")
    words = sum(len(text.split()) for text in texts)
    print(f"GAP: {len(texts)} documents, {words} words; names={'on' if args.names else 'off'}")
    rules = build_substituter(names=args.names, analyzer="rules")
    rate, seconds = words_per_second(rules, texts, args.repeats)
    print(f"rules : {rate:>12,.0f} words/s ({seconds:.2f} s, best of {args.repeats})")
    if spacy_available(args.spacy_model):
        spacy_path = build_substituter(
            names=args.names, analyzer="spacy", spacy_model=args.spacy_model
        )
        rate, seconds = words_per_second(spacy_path, texts, 1)
        print(f"spacy : {rate:>12,.0f} words/s ({seconds:.2f} s, {args.spacy_model})")
    else:
        print(f"spacy : not measured ({args.spacy_model} or spaCy not installed)")


if __name__ == "__main__":
    main()
