"""Prints a digest of the counterfactual text a language demo trains on.

Usage:
    python scripts/demo_corpus_digest.py [--language de da] [--naive]

The German and Danish demos (``make demo-de``, ``make demo-da``) pre-train on occupational
sentences (seed 0) and fine-tune on new ones (seed 1) of which CDS swaps half. This script
substitutes *every* sentence of both (20,000 each, as the recipes draw them) with the
language's rules and prints the count and a sha256 of the result. Run it at two commits: an
equal digest means a change of the CDS rules leaves the demo's training text, and so every
demo number, as it was; a different one means ``make demo-de``/``demo-da`` must be re-run.
``--naive`` uses the German rules without agreement (the demo's naive comparison run).
"""

from __future__ import annotations

import argparse
import hashlib

from cdsbias.cds import get_language
from cdsbias.data.occupations import occupational_sentences

#: The sentences each demo recipe draws (recipes/demo_de.yaml, demo_da.yaml) and the seeds
#: of the demo model's corpus (0) and of the fine-tuning corpus (1).
SENTENCES = 20000
SEEDS = (0, 1)


def digest(language: str, *, naive: bool = False) -> tuple[int, str]:
    """(sentences, sha256 of the substituted sentences joined by newlines) of one language."""
    options = {"agreement": False} if naive else {}
    rules = get_language(language, names=True, **options)
    swapped: list[str] = []
    for seed in SEEDS:
        swapped += rules.substitute_many(occupational_sentences(SENTENCES, seed, language))
    return len(swapped), hashlib.sha256("\n".join(swapped).encode("utf-8")).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--language", nargs="+", default=["de", "da"])
    parser.add_argument("--naive", action="store_true", help="German without agreement")
    args = parser.parse_args(argv)
    for language in args.language:
        count, sha = digest(language, naive=args.naive)
        print(f"{language}{' naive' if args.naive else ''}: {count} sentences, sha256 {sha}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
