"""Measures German CDS speed (words per second, one core) against the English engine.

Usage:
    python scripts/bench_cds_german.py [--data-dir ../shared/data] [--repeats 3]

German text: the 5,400 BEC-Pro DE sentences (every one has a gendered person word, the
worst case for the German rules) plus the hand-written German gold sentences, joined into
documents of about 200 words; English text: all of GAP, and the 5,400 BEC-Pro EN sentences
(as dense in gendered words as the German ones). All run interleaved in the same process,
so the ratios do not depend on the machine. Issue #22 asks for >= 200,000 words/s per
core for German.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

from cdsbias.cds import build_substituter, read_gap
from cdsbias.cds.languages.de import German

REPO = Path(__file__).resolve().parents[1]


def becpro_sentences(data_dir: Path, language: str) -> list[str]:
    """The BEC-Pro sentences of ``language`` (DE or EN)."""
    path = data_dir / "bec-pro" / f"BEC-Pro_{language}.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        return [row["Sentence"] for row in csv.DictReader(handle, delimiter="\t")]


def documents(sentences: list[str]) -> list[str]:
    """Sentences joined into documents of about 200 words."""
    joined, current = [], []
    for sentence in sentences:
        current.append(sentence)
        if sum(len(s.split()) for s in current) >= 200:
            joined.append(" ".join(current))
            current = []
    return joined + ([" ".join(current)] if current else [])


def german_documents(data_dir: Path) -> list[str]:
    """BEC-Pro DE sentences and the gold sources."""
    sentences = becpro_sentences(data_dir, "DE")
    for name in ("gold_de.tsv", "gold_de_heldout.tsv"):
        for line in (REPO / "tests" / "assets" / "cds" / name).read_text("utf-8").splitlines():
            if line.strip() and not line.startswith(("#", "phenomenon\t")):
                sentences.append(line.split("\t")[1])
    return documents(sentences)


def best_seconds(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = Path(os.environ.get("CDSBIAS_SHARED_DATA", REPO.parent / "shared" / "data"))
    parser.add_argument("--data-dir", type=Path, default=default_data)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    german_texts = german_documents(args.data_dir)
    german = German()
    german_words = sum(len(text.split()) for text in german_texts)
    english_texts = []
    for split in ("development", "test", "validation"):
        gap = read_gap(args.data_dir / "gap-coreference" / f"gap-{split}.tsv")
        english_texts += [row["Text"] for row in gap.rows]
    english = build_substituter()
    english_words = sum(len(text.split()) for text in english_texts)
    # BEC-Pro EN is as dense in gendered words as BEC-Pro DE: the like-for-like baseline.
    dense_texts = documents(becpro_sentences(args.data_dir, "EN"))
    dense_words = sum(len(text.split()) for text in dense_texts)
    # Interleaved, so that a load change on the shared machine hits both alike.
    german_seconds = english_seconds = dense_seconds = float("inf")
    for _ in range(args.repeats):
        german_seconds = min(
            german_seconds, best_seconds(lambda: [german.edits(t) for t in german_texts], 1)
        )
        english_seconds = min(
            english_seconds, best_seconds(lambda: english.substitute_many(english_texts), 1)
        )
        dense_seconds = min(
            dense_seconds, best_seconds(lambda: english.substitute_many(dense_texts), 1)
        )

    german_rate = german_words / german_seconds
    english_rate = english_words / english_seconds
    print(f"German  (BEC-Pro DE + gold): {german_words:,} words, {german_rate:,.0f} words/s")
    print(f"English (GAP, same process): {english_words:,} words, {english_rate:,.0f} words/s")
    dense_rate = dense_words / dense_seconds
    print(f"English (BEC-Pro EN, same process): {dense_words:,} words, {dense_rate:,.0f} words/s")
    print(f"ratio German/English (GAP): {german_rate / english_rate:.2f}")
    print(f"ratio German/English (BEC-Pro, like for like): {german_rate / dense_rate:.2f}")


if __name__ == "__main__":
    main()
