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
5. Adjectival masculines (part of speech "Substantiv,adjektivische Deklination": der
   Beamte / ein Beamter) whose *-in* feminine the lexicon attests (Beamtin, Postbeamtin):
   kind ``adjectival``; the masculine cells list the strong, weak and mixed forms, the
   rules inflect the stem like an adjective.
6. One-way pairs (ONE_WAY): Krankenschwester -> Krankenpfleger, while Krankenpfleger keeps
   its attested *-in* pair (Krankenpflegerin, BEC-Pro's form).
7. A supplement (SUPPLEMENT) of BEC-Pro's own German profession pairs that the lexicon
   lacks and no rule of the substitution covers (Bartl, Nissim & Gatt 2020, ``Professions
   US+DE.tsv``, CC BY 4.0), with the regular *-er* paradigm; BEC-Pro's typo *Dachedecker*
   maps one way to *Dachdeckerin*.

Each row: the masculine paradigm then the feminine paradigm, 8 cells each (nominative,
genitive, dative, accusative singular, then the same plural), then the kind: ``in``,
``irregular``, ``adjectival`` or ``supplement``, followed by ``<`` when only the feminine is
looked up (it maps to the masculine, not back) or ``>`` when only the masculine is. A cell
may list variants separated by ``|`` (Arztes|Arzts); the first is the form written when
substituting. An empty cell means the lexicon has no such form.

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
EXCEPTIONS = OUT.parent / "person_suffix_exceptions.txt"
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
    ("Zimmermann", "Zimmerin"),  # the carpenter; "Zimmerfrau" is a chambermaid
    ("Hauptmann", "Hauptmännin"),  # the captain; "Hauptfrau" is a principal wife
]
# Feminines that map to a masculine paired otherwise: Krankenschwester -> Krankenpfleger,
# whose own feminine is the attested Krankenpflegerin.
ONE_WAY = [("Krankenpfleger", "Krankenschwester")]
# BEC-Pro's German profession pairs (Bartl, Nissim & Gatt 2020, "Professions US+DE.tsv",
# CC BY 4.0) that the lexicon lacks and no rule covers (not an -ist/-loge/-iker/-eur
# noun, not a compound of a known person noun): masculine, feminine, one-way marker.
# Bodenleger, Postsortierer: no entry; Haushälter: only the feminine is attested;
# Dachedecker: BEC-Pro's typo for Dachdecker, mapped one way to its feminine.
SUPPLEMENT = [
    ("Bodenleger", "Bodenlegerin", ""),
    ("Postsortierer", "Postsortiererin", ""),
    ("Haushälter", "Haushälterin", ""),
    ("Dachedecker", "Dachdeckerin", ">"),
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
    # Adjectival: "der Freier" is a prostitute's client, "die Freiin" a baroness.
    "Freier",
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


def adjectival_paradigm(row: dict[str, str]) -> list[str]:
    """The 8 cells of an adjectival noun: its strong, weak and mixed forms per slot."""
    cells = []
    for number in NUMBERS:
        for case in CASES:
            forms = []
            for declension in ("stark", "schwach", "gemischt"):
                value = row.get(f"{case} {number} {declension}", "").strip()
                if value and value != "—" and value not in forms:
                    forms.append(value)
            cells.append("|".join(forms))
    return cells


def regular_paradigm(masculine: str) -> list[str]:
    """The paradigm of a masculine *-er* agent noun (der Bodenleger, des Bodenlegers)."""
    return (
        [masculine, masculine + "s", masculine, masculine]
        + [masculine] * 2
        + [
            masculine + "n",
            masculine,
        ]
    )


def feminine_paradigm(feminine: str) -> list[str]:
    """The paradigm of an *-in* feminine (die Bodenlegerin, die Bodenlegerinnen)."""
    return [feminine] * 4 + [feminine + "nen"] * 4


def read_adjectival(path: Path) -> dict[str, dict]:
    """Adjectival masculine nouns by lemma (der Beamte / ein Beamter)."""
    adjectival: dict[str, dict] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            adjective_like = set(row["pos"].split(",")) == {
                "Substantiv",
                "adjektivische Deklination",
            }
            if adjective_like and row["genus"] == "m" and row["lemma"].endswith("er"):
                adjectival.setdefault(row["lemma"], row)
    return adjectival


def adjectival_pairs(adjectival: dict[str, dict], feminine: dict[str, dict]) -> list[tuple]:
    """(masculine row, feminine row, kind) for adjectival masculines with an attested
    *-in* feminine (Beamter -> Beamtin)."""
    pairs = []
    for lemma, row in adjectival.items():
        female = lemma[:-2] + "in"
        if lemma not in NOT_PERSON and female in feminine:
            pairs.append((row, feminine[female], "adjectival"))
    return pairs


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
    for male, female in ONE_WAY:
        if male in masculine and female in feminine:
            pairs.append((masculine[male], feminine[female], "irregular<"))
    for male_head, female_head in COMPOUND_HEADS:
        for lemma, row in masculine.items():
            if lemma in seen or not lemma.endswith(male_head) or lemma.lower() == male_head:
                continue
            female = lemma[: -len(male_head)] + female_head
            if female in feminine:
                pairs.append((row, feminine[female], "irregular"))
                seen.add(lemma)
    return pairs


def suffix_exceptions(path: Path, rows: list[list[str]]) -> list[str]:
    """Lower-case endings of the lexicon's nouns that end like a person suffix's forms
    (cdsbias.cds.languages.de_lexicon.PERSON_SUFFIXES: *Liste/Listen*, *Geist*,
    *Monolog/Monologe*) but are no persons of that suffix. An entry of 5+ letters that
    ends no person noun of the lexicon is an ending, written ``-geist`` (it covers
    *Zeitgeist*, which is then not listed); the others are whole words (*rist* must not
    block *Fakturist*, *listen* not *Journalisten*, so *Außenrist* and *Einkaufslisten*
    are listed themselves).
    """
    import sys

    sys.path.insert(0, str(REPO))
    from cdsbias.cds.languages.de_lexicon import EXCEPTION_ENDING_LETTERS, PERSON_SUFFIXES

    by_lemma = {row[0].split("|")[0]: row for row in rows}
    endings = set()
    for suffix, model in PERSON_SUFFIXES.items():
        cut = len(model) - len(suffix)
        for cell in by_lemma[model][:16]:
            endings.update(form[cut:] for form in cell.split("|") if form)
    persons = {form for row in rows for cell in row[:16] for form in cell.split("|")}
    found = set()
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            lemma = row["lemma"]
            if "Substantiv" not in row["pos"].split(",") or not lemma[:1].isupper():
                continue
            if lemma in persons or _suffix_person(row):
                continue
            forms = {lemma} | {
                value
                for key, value in row.items()
                if key not in ("lemma", "pos") and not key.startswith("genus") and value
            }
            for form in forms:
                lower = form.lower()
                if any(lower.endswith(end) and len(lower) > len(end) for end in endings):
                    found.add(lower)
    person_forms = [form.lower() for form in persons]
    endings: list[str] = []
    words: list[str] = []
    for form in sorted(found, key=lambda form: (len(form), form)):
        if " " in form or any(form.endswith(ending) for ending in endings):
            continue
        if len(form) >= EXCEPTION_ENDING_LETTERS and not any(
            person.endswith(form) for person in person_forms
        ):
            endings.append(form)
        else:
            words.append(form)
    return sorted(["-" + ending for ending in endings] + words, key=lambda e: e.lstrip("-"))


def _suffix_person(row: dict[str, str]) -> bool:
    """A person noun of a productive suffix: a masculine in -ologe, -iker, -eur or a
    weak -ist (des Polizisten; der Mist, des Mistes is none), or their -in feminine."""
    lemma = row["lemma"]
    genders = {row[key] for key in GENUS_COLUMNS if row.get(key)}
    if lemma.endswith(("istin", "ologin", "ikerin", "eurin")):
        return True  # whatever its genus says (Stilistin is marked masculine)
    if "m" not in genders:
        return False
    if lemma.endswith("ist"):
        return row.get("genitiv singular", "").endswith("isten")
    return lemma.endswith(("ologe", "iker", "eur"))


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
    pairs.sort(key=lambda pair: (not pair[2].startswith("irregular"), pair[0]["lemma"]))
    rows = [[*paradigm(male), *paradigm(female), kind] for male, female, kind in pairs]
    adjectival = adjectival_pairs(read_adjectival(source), feminine)
    adjectival.sort(key=lambda pair: pair[0]["lemma"])
    rows += [
        [*adjectival_paradigm(male), *paradigm(female), kind] for male, female, kind in adjectival
    ]
    known = {row[0].split("|")[0] for row in rows}
    for male, female, direction in SUPPLEMENT:
        if male in known or male in masculine:
            raise SystemExit(f"supplement pair {male} is in the lexicon now: drop it")
        cells = paradigm(feminine[female]) if female in feminine else feminine_paradigm(female)
        rows.append([*regular_paradigm(male), *cells, "supplement" + direction])
    header = [
        "# cdsbias German person-noun pairs: masculine paradigm, feminine paradigm, kind.",
        "# Cells: nom gen dat acc singular, nom gen dat acc plural; variants split by '|'.",
        "# Kind: in, irregular, adjectival, supplement; '<' only the feminine is looked up,",
        "# '>' only the masculine.",
        "# Source: german-nouns 1.2.5 (German Wiktionary, CC BY-SA 4.0); this file is an",
        "# adaptation under CC BY-SA 4.0. Supplement rows: BEC-Pro's Professions US+DE.tsv",
        "# (Bartl, Nissim & Gatt 2020, CC BY 4.0). Generated by",
        "# scripts/build_german_lexicon.py; do not edit by hand.",
    ]
    body = ["\t".join(row) for row in rows]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(header + body) + "\n"
    # gzip without a timestamp, so rebuilding the same lexicon gives the same bytes.
    args.out.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    exceptions = suffix_exceptions(source, rows)
    (args.out.parent / EXCEPTIONS.name).write_text(
        "# Lower-case endings of nouns that end like a person suffix (-ist, -ologe, -iker,\n"
        "# -eur) but are no persons: a word equal to one, or ending in one written -x, never\n"
        "# takes the suffix's paradigm.\n"
        "# Source: german-nouns 1.2.5 (German Wiktionary, CC BY-SA 4.0). Generated by\n"
        "# scripts/build_german_lexicon.py; do not edit by hand.\n" + "\n".join(exceptions) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {len(exceptions)} suffix exceptions")
    counts: dict[str, int] = {}
    for row in rows:
        kind = row[-1].rstrip("<>")
        counts[kind] = counts.get(kind, 0) + 1
    print(f"wrote {len(rows)} pairs ({', '.join(f'{n} {k}' for k, n in counts.items())})")


if __name__ == "__main__":
    main()
