"""Builds cdsbias/resources/wordlists/de/person_nouns.tsv.gz from the german-nouns lexicon.

Source: the PyPI package ``german-nouns`` 1.2.5 (``pip install german-nouns``), ``nouns.csv``:
about 100,000 German nouns with gender and full case paradigms, compiled from the German
Wiktionary (CC BY-SA 4.0). The generated file is an adaptation of that data and is under
CC BY-SA 4.0 too (see the README beside it). cdsbias does not import the package; it ships
the generated file.

Derivation:
1. Masculine common nouns (part of speech exactly "Substantiv", genus m, not a name or a
   place) of at least three letters.
2. Their *-in* feminine: ``lemma + in`` (Lehrer -> Lehrerin) or with a final *-e* dropped
   (Kollege -> Kollegin), each tried first with the last vowel umlauted (Arzt -> Ärztin,
   Bauer -> Bäuerin). A pair is kept only if the lexicon attests that feminine as a
   feminine noun; the first attested candidate in that order wins.
3. Irregular pairs (IRREGULAR below: Mann/Frau, Vater/Mutter, ...) and the compounds the
   lexicon attests for both heads (Kaufmann/Kauffrau, Großvater/Großmutter, ...).
4. Animals (ANIMALS) and masculine nouns whose *-in* form means something else (NOT_PERSON)
   are left out. When two masculine nouns have the same *-in* feminine, one is kept (see
   ``_base_rank``: Romane, not Roman "novel"; Bürger, not Burger), so every pair is a
   bijection.

Each row: the masculine paradigm then the feminine paradigm, 8 cells each (nominative,
genitive, dative, accusative singular, then the same plural), then ``in`` or
``irregular``. A cell may list variants separated by ``|`` (Arztes|Arzts); the first is the
form written when substituting. An empty cell means the lexicon has no such form.

Usage:
    python scripts/build_german_lexicon.py [--out PATH]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "cdsbias" / "resources" / "wordlists" / "de" / "person_nouns.tsv.gz"
GENUS_COLUMNS = ("genus", "genus 1", "genus 2", "genus 3", "genus 4")
CASES = ("nominativ", "genitiv", "dativ", "akkusativ")
NUMBERS = ("singular", "plural")
IRREGULAR = [
    ("Mann", "Frau"),
    ("Vater", "Mutter"),
    ("Bruder", "Schwester"),
    ("Sohn", "Tochter"),
    ("Onkel", "Tante"),
    ("Neffe", "Nichte"),
    ("Herr", "Dame"),
    ("Opa", "Oma"),
    ("Papa", "Mama"),
    ("Bräutigam", "Braut"),
    ("Mönch", "Nonne"),
    ("Witwer", "Witwe"),
    ("Cousin", "Cousine"),
    ("Prinz", "Prinzessin"),
    ("Abt", "Äbtissin"),
    ("Steward", "Stewardess"),
    ("Hausmann", "Hausfrau"),
    ("Krankenpfleger", "Krankenschwester"),
    ("Zimmermann", "Zimmerin"),  # the carpenter; "Zimmerfrau" is a chambermaid
    ("Hauptmann", "Hauptmännin"),  # the captain; "Hauptfrau" is a principal wife
]
# Heads whose compounds are paired when the lexicon has both (Großvater/Großmutter).
COMPOUND_HEADS = [
    ("mann", "frau"),
    ("vater", "mutter"),
    ("bruder", "schwester"),
    ("sohn", "tochter"),
    ("onkel", "tante"),
    ("neffe", "nichte"),
]
ANIMALS = {
    "Affe", "Bär", "Dachs", "Elch", "Esel", "Fuchs", "Hase", "Hund", "Löwe", "Tiger",
    "Wolf", "Kater", "Rüde", "Ochse", "Hengst", "Stier", "Eber", "Hahn", "Gänserich",
    "Erpel", "Elefant", "Leopard", "Panther", "Puma", "Jaguar", "Gorilla", "Schimpanse",
    "Biber", "Hamster", "Ziegenbock", "Bock", "Rammler", "Kamel", "Hirsch", "Luchs",
    "Marder", "Iltis", "Otter", "Gepard", "Wal", "Delfin", "Pudel", "Dackel",
}  # fmt: skip
# Masculine nouns that are not persons (or whose -in form is another word).
NOT_PERSON = {
    "Eifer", "Heber", "Kiste", "Kete", "Lake", "Enze", "Heroe", "Herr", "Mann", "Kure",
    "Bure", "Bot", "Elb", "Elbe", "Elf", "Ase", "Heide", "Geuse", "Jeck", "Gast", "Mensch",
    # Devices first, persons second: "der Drucker" is the printer.
    "Drucker", "Fernseher", "Rechner", "Bohrer", "Träger", "Zähler", "Brenner", "Schlepper",
}  # fmt: skip


def umlauted(word: str) -> str | None:
    """Umlauts the last a/o/u (au -> äu) of ``word``; None if it has none."""
    index = max(word.rfind(vowel) for vowel in "aouAOU")
    if index < 0:
        return None
    if word[index] in "uU" and index > 0 and word[index - 1] in "aA":
        index -= 1
    return (
        word[:index]
        + {"a": "ä", "o": "ö", "u": "ü", "A": "Ä", "O": "Ö", "U": "Ü"}[word[index]]
        + word[index + 1 :]
    )


def slot_forms(row: dict[str, str], case: str, number: str) -> list[str]:
    """All forms the lexicon gives for one case and number, the main one first."""
    key = f"{case} {number}"
    forms = []
    for column in (key, f"{key} 1", f"{key} 2", f"{key} 3", f"{key} 4", f"{key}*"):
        value = row.get(column, "").strip()
        if value and value not in forms and value != "—":
            forms.append(value)
    return forms


def paradigm(row: dict[str, str]) -> list[str]:
    """The 8 cells (4 cases x singular, plural) of one lexicon row.

    Variants that would mislead a lookup are dropped: *-leute* plurals (Fachleute is no
    masculine form), "Mannen" (vassals), and a singular variant equal to a plural form
    (Herren beside Herrn), which would make a plural look singular.
    """
    plural = {form for case in CASES for form in slot_forms(row, case, "plural")}
    cells = []
    for number in NUMBERS:
        for case in CASES:
            forms = slot_forms(row, case, number)
            kept = [
                form
                for index, form in enumerate(forms)
                if "leute" not in form
                and not form.endswith("Mannen")
                and (index == 0 or number == "plural" or form not in plural)
            ]
            cells.append("|".join(kept))
    return cells


def read_lexicon(path: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """Masculine and feminine common nouns by lemma (the first, fullest entry wins)."""
    masculine: dict[str, dict] = {}
    feminine: dict[str, dict] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if set(row["pos"].split(",")) != {"Substantiv"}:
                continue
            # Nouns with variant paradigms give their gender per variant (genus 1, 2, ...).
            genders = {row[key] for key in GENUS_COLUMNS if row.get(key)}
            target = (
                {"m": masculine, "f": feminine}.get(genders.pop()) if len(genders) == 1 else None
            )
            if target is None:
                continue
            filled = sum(1 for cell in paradigm(row) if cell)
            lemma = row["lemma"]
            if lemma not in target or filled > target[lemma]["_filled"]:
                target[lemma] = {**row, "_filled": filled}
    return masculine, feminine


def _base_rank(pair: tuple) -> tuple[int, str]:
    """Which of several masculines sharing an *-in* feminine is its base: one ending in
    -e (Romane, not Roman "novel"), then one the feminine contains unchanged (Bürger, not
    Burger), then alphabetical."""
    male, female = pair[0]["lemma"], pair[1]["lemma"]
    return (0 if male.endswith("e") else 1 if female.startswith(male) else 2, male)


def derive_pairs(masculine: dict[str, dict], feminine: dict[str, dict]) -> list[tuple]:
    """(masculine row, feminine row, kind) for every pair kept."""
    pairs = []
    for lemma, row in masculine.items():
        if len(lemma) < 3 or lemma in ANIMALS or lemma in NOT_PERSON or not lemma.isalpha():
            continue
        if lemma.endswith("mann") and lemma[:-4] + "frau" in feminine:
            continue  # Kaufmann -> Kauffrau (a compound-head pair), not Kaufmännin
        stems = [lemma] + ([lemma[:-1]] if lemma.endswith("e") else [])
        # The umlauted form first: where Wiktionary has both, it is the standard one
        # (Bäuerin, not Bauerin).
        candidates = [umlauted(stem) + "in" for stem in stems if umlauted(stem)]
        candidates += [stem + "in" for stem in stems]
        for candidate in candidates:
            if candidate in feminine:
                pairs.append((row, feminine[candidate], "in"))
                break
    # Two masculines with one *-in* feminine: keep the likeliest base (see _base_rank).
    by_feminine: dict[str, list[tuple]] = {}
    for pair in pairs:
        by_feminine.setdefault(pair[1]["lemma"], []).append(pair)
    pairs = [min(group, key=_base_rank) for group in by_feminine.values()]
    # An irregular pair replaces an -in pair of the same masculine (Mönch -> Nonne, not
    # Mönchin), so each masculine has one feminine.
    irregular_males = {male for male, _ in IRREGULAR}
    pairs = [pair for pair in pairs if pair[0]["lemma"] not in irregular_males]
    seen = {male["lemma"] for male, _, _ in pairs}
    for male, female in IRREGULAR:
        if male in masculine and female in feminine:
            pairs.append((masculine[male], feminine[female], "irregular"))
            seen.add(male)
    for male_head, female_head in COMPOUND_HEADS:
        for lemma, row in masculine.items():
            if lemma in seen or not lemma.endswith(male_head) or lemma.lower() == male_head:
                continue
            female = lemma[: -len(male_head)] + female_head
            if female in feminine:
                pairs.append((row, feminine[female], "irregular"))
                seen.add(lemma)
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    spec = importlib.util.find_spec("german_nouns")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the 'german-nouns' package is needed: pip install german-nouns")
    source = Path(next(iter(spec.submodule_search_locations))) / "nouns.csv"
    masculine, feminine = read_lexicon(source)
    # A pair needs both nominative singulars (the lexicon lacks a few paradigms).
    pairs = [
        pair
        for pair in derive_pairs(masculine, feminine)
        if paradigm(pair[0])[0] and paradigm(pair[1])[0]
    ]
    pairs.sort(key=lambda pair: (pair[2] != "irregular", pair[0]["lemma"]))
    header = [
        "# cdsbias German person-noun pairs: masculine paradigm, feminine paradigm, kind.",
        "# Cells: nom gen dat acc singular, nom gen dat acc plural; variants split by '|'.",
        "# Source: german-nouns 1.2.5 (German Wiktionary, CC BY-SA 4.0); this file is an",
        "# adaptation under CC BY-SA 4.0. Generated by scripts/build_german_lexicon.py;",
        "# do not edit by hand.",
    ]
    body = ["\t".join([*paradigm(male), *paradigm(female), kind]) for male, female, kind in pairs]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(header + body) + "\n"
    # gzip without a timestamp, so rebuilding the same lexicon gives the same bytes.
    args.out.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    irregular = sum(1 for *_, kind in pairs if kind == "irregular")
    print(f"wrote {len(pairs)} pairs ({len(pairs) - irregular} -in, {irregular} irregular)")


if __name__ == "__main__":
    main()
