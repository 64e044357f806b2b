"""Builds the German and Danish first-name pairs from per-country name frequencies.

Writes ``cdsbias/resources/wordlists/{de,da}/name_pairs.tsv`` (``Male<TAB>Female``, the format
of the English ``name_pairs.tsv``) and ``{de,da}/ambiguous_given_names.tsv``
(``Name<TAB>word|proper``, the format of the English ``ambiguous_given_names.tsv``).

Source: ``nam_dict.txt`` by Jörg Michael (2007-2008, GNU Free Documentation License 1.2 or
later), as shipped in the PyPI package ``gender-guesser`` 0.4.0 (``pip install
gender-guesser``; a build-time tool only, nothing in cdsbias imports it). Each line gives a
name, its sex class and one hexadecimal frequency per country (1 = rare ... D = extremely
common; a logarithmic scale where each step is about a factor of two, 10 = at least 2% of
the population). Column 12 is Germany, column 16 is Denmark.

Derivation, per country:
1. Sex classes ``M``/``1M`` count as male and ``F``/``1F`` as female ("1M": male when it
   is the first given name). A name with any unisex line (``?``, ``?M``, ``?F``) that has a
   frequency in the country is dropped as ambiguous. A name listed for both sexes in the
   country is kept only for the sex whose frequency is at least ``--steps`` steps (default
   4, a factor of about 16, like the English list's factor 10) higher; otherwise dropped.
2. Lines marked ``+`` in column 30 (duplicates with expanded umlauts) and names that are not
   a single run of letters ("Jun+Wei", "Hans-Peter") are skipped.
3. Names that are also common words or places get an ambiguity class, so the engine applies
   the context rules of ``ambiguous_given_names.tsv`` to them:
   German: ``word`` if the ``german-nouns`` lexicon (Wiktionary) lists the name as a
   common noun or a place ("Wolf", "Rose", "Mark", "Achim") or the name is in GERMAN_WORDS
   below ("Ernst", "Frank"); ``proper`` for month names ("August");
   Danish: ``word`` for the hand-listed DANISH_WORDS ("Hans" is also the possessive "his",
   "Bo" "to live", "Tom" "empty", "Liv" "life").
4. Male and female names are sorted by frequency in the country (ties: by the name's
   summed frequency over all countries, then alphabetically) and paired by rank within each
   ambiguity class, as scripts/build_name_pairs.py does for English. Only whole pairs are
   kept, so the map is a bijection.

Usage:
    python scripts/build_name_pairs_by_country.py [--steps 4] [--min-frequency 1]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORDLISTS = REPO / "cdsbias" / "resources" / "wordlists"
# Position of each country's frequency after column 30 of nam_dict.txt.
COUNTRY_COLUMNS = {"de": 12, "da": 16}
COUNTRY_NAMES = {"de": "Germany", "da": "Denmark"}
MALE_CLASSES = {"M", "1M"}
FEMALE_CLASSES = {"F", "1F"}
UNISEX_CLASSES = {"?", "?M", "?F"}
# German names that are common non-noun words or month names (nouns come from the lexicon).
GERMAN_WORDS = {
    "Ernst": "word",  # ernst "serious"
    "Frank": "word",  # frank "frank"
    "August": "proper",  # the month
    "Mai": "proper",
    "Juni": "proper",
    "Juli": "proper",
    "Florian": "",  # the lexicon's "Florian" is the name itself
}
# Danish names that are also common Danish words.
DANISH_WORDS = {
    "Hans": "word",  # hans "his"
    "Bo": "word",  # bo "to live"
    "Tom": "word",  # tom "empty"
    "Per": "word",  # per "per"
    "Kaj": "word",  # kaj "quay"
    "Sten": "word",  # sten "stone"
    "Ask": "word",  # ask "ash tree"
    "Dag": "word",  # dag "day"
    "Rune": "word",  # rune "rune"
    "Storm": "word",
    "Birk": "word",  # birk "birch"
    "Liv": "word",  # liv "life"
    "Sol": "word",  # sol "sun"
    "Gry": "word",  # gry "dawn"
    "Maj": "proper",  # the month
    "Bent": "word",  # bent "bent grass"
    "Helle": "word",  # helle "flat stone", "safe zone"
    "Lone": "word",
    "Stig": "word",  # stig "path"
    "Frej": "word",
    "Tue": "word",  # tue "tussock"
    "Ulf": "word",
    "Ebbe": "word",  # ebbe "ebb"
    "Mark": "word",  # mark "field"
    "Lærke": "word",  # lærke "lark"
    "Iben": "word",  # iben "ebony"
    "Rosa": "word",  # rosa "pink"
    "Viol": "word",
}


def read_name_dictionary(path: Path) -> list[tuple[str, str, str]]:
    """Reads (sex class, name, country frequency columns) from nam_dict.txt."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line[0] in "#=":
            continue
        if len(line) > 29 and line[29] == "+":
            continue
        sex_class, name = line.split()[:2]
        rows.append((sex_class, name, line[30:].rstrip("$\r ")))
    return rows


def hex_frequency(columns: str, index: int) -> int:
    """The frequency digit at ``index`` (0 when blank or past the end)."""
    digit = columns[index] if index < len(columns) else " "
    return int(digit, 16) if digit.strip() else 0


def country_frequencies(
    rows: list[tuple[str, str, str]], column: int
) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """Per name: the highest frequency of each sex (m/f/u) in the country, and the summed
    frequency over all countries (the tie-breaker)."""
    frequency: dict[str, dict[str, int]] = defaultdict(lambda: {"m": 0, "f": 0, "u": 0})
    total: dict[str, int] = defaultdict(int)
    for sex_class, name, columns in rows:
        if not name.isalpha() or len(name) < 2:
            continue
        sex = "m" if sex_class in MALE_CLASSES else "f" if sex_class in FEMALE_CLASSES else "u"
        if sex_class not in MALE_CLASSES | FEMALE_CLASSES | UNISEX_CLASSES:
            raise SystemExit(f"unknown sex class {sex_class!r} for {name}")
        value = hex_frequency(columns, column)
        frequency[name][sex] = max(frequency[name][sex], value)
        total[name] += sum(hex_frequency(columns, i) for i in range(len(columns)))
    return frequency, total


def german_lexicon_classes() -> dict[str, str]:
    """Names the german-nouns lexicon also lists as common nouns or places (class word).

    Wiktionary lists many names as nouns or places too ("Wolf", "Rose", "Charlotte" the
    dessert, "Achim" the town), so the class only asks the engine for its context rule
    (in German: not a name after a determiner or preposition, "der Wolf", "in Achim").
    """
    spec = importlib.util.find_spec("german_nouns")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the 'german-nouns' package is needed: pip install german-nouns")
    nouns = Path(next(iter(spec.submodule_search_locations))) / "nouns.csv"
    classes: dict[str, str] = {}
    with nouns.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            kinds = set(row["pos"].split(","))
            if "Toponym" in kinds or kinds == {"Substantiv"}:
                classes[row["lemma"]] = "word"
    return classes


def build_pairs(
    frequency: dict[str, dict[str, int]],
    total: dict[str, int],
    ambiguity: dict[str, str],
    steps: int,
    min_frequency: int,
) -> list[tuple[str, str]]:
    """Pairs the country's male and female names by frequency rank within each class."""

    def sexed(own: str, other: str) -> list[str]:
        names = [
            name
            for name, f in frequency.items()
            if f[own] >= min_frequency
            and f["u"] == 0
            and (f[other] == 0 or f[own] - f[other] >= steps)
        ]
        return sorted(names, key=lambda name: (-frequency[name][own], -total[name], name))

    male, female = sexed("m", "f"), sexed("f", "m")
    pairs = []
    for name_class in ("", "word", "proper"):
        males = [name for name in male if ambiguity.get(name, "") == name_class]
        females = [name for name in female if ambiguity.get(name, "") == name_class]
        # Only whole pairs: the longer list's tail has no partner and is left out.
        pairs.extend(zip(males, females, strict=False))
    return pairs


def write_language(
    language: str,
    pairs: list[tuple[str, str]],
    ambiguity: dict[str, str],
    steps: int,
    min_frequency: int,
) -> None:
    folder = WORDLISTS / language
    folder.mkdir(parents=True, exist_ok=True)
    country = COUNTRY_NAMES[language]
    header = [
        f"# cdsbias {country} first-name pairs, male<TAB>female, paired by frequency rank.",
        f"# Source: nam_dict.txt (Jörg Michael, GNU FDL 1.2+), {country} column, as shipped by",
        "# the PyPI package 'gender-guesser' 0.4.0. Generated by",
        f"# scripts/build_name_pairs_by_country.py --steps {steps} --min-frequency "
        f"{min_frequency}; do not edit by hand.",
    ]
    body = [f"{male}\t{female}" for male, female in pairs]
    (folder / "name_pairs.tsv").write_text("\n".join(header + body) + "\n", encoding="utf-8")
    paired = {name for pair in pairs for name in pair}
    ambiguous = sorted(
        (name, name_class)
        for name, name_class in ambiguity.items()
        if name in paired and name_class
    )
    header = [
        f"# {country} given names (from name_pairs.tsv) that are also common words or places.",
        "# Generated by scripts/build_name_pairs_by_country.py; format Name<TAB>word|proper,",
        "# the classes of the English ambiguous_given_names.tsv.",
    ]
    body = [f"{name}\t{name_class}" for name, name_class in ambiguous]
    (folder / "ambiguous_given_names.tsv").write_text(
        "\n".join(header + body) + "\n", encoding="utf-8"
    )
    print(f"{language}: wrote {len(pairs)} pairs, {len(ambiguous)} ambiguous names to {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--min-frequency", type=int, default=1)
    args = parser.parse_args()
    spec = importlib.util.find_spec("gender_guesser")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the 'gender-guesser' package is needed: pip install gender-guesser")
    source = Path(next(iter(spec.submodule_search_locations))) / "data" / "nam_dict.txt"
    rows = read_name_dictionary(source)
    classes = {"de": {**german_lexicon_classes(), **GERMAN_WORDS}, "da": DANISH_WORDS}
    for language, column in COUNTRY_COLUMNS.items():
        frequency, total = country_frequencies(rows, column)
        pairs = build_pairs(frequency, total, classes[language], args.steps, args.min_frequency)
        write_language(language, pairs, classes[language], args.steps, args.min_frequency)


if __name__ == "__main__":
    main()
