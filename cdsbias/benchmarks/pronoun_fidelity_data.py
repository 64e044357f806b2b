"""Templates and names of the ``pronoun_fidelity`` benchmark, generated or read from a file.

Following MISGENDERED's design (Hossain et al. 2023, "MISGENDERED: Limits of Large Language
Models in Understanding Pronouns", ACL 2023): a sentence declares a person's pronouns
("Casey's pronouns are xe/xem/xyr."), a later sentence masks one of their pronouns in one
grammatical case, and the model must fill the declared family's form. The declaration is
MISGENDERED's explicit one, the family's nominative/accusative/dependent possessive.

**The generated set** (the default; tests and the demo use it): the 15 templates of
``TEMPLATES`` below, three per case, written for cdsbias; x the six families of
cdsbias.cds.pronoun_families; x ``NAMES``: two unisex names (cdsbias's
``en_unisex_names.txt``), two male and two female names (the most frequent of the 1990 US
Census lists behind ``name_pairs.tsv``), so the row's name never gives the answer away
for the neopronoun families and tells whether a gendered name pulls the binary forms.

**A template file** (``--data FILE``, TSV with a header): a ``case`` column (one of
cdsbias.cds.pronoun_families.CASES) and a ``template`` column holding ``{name}``, the
declared-pronoun slot ``{pronouns}`` and one ``{mask}``; an optional ``names.tsv`` beside
it (``name<TAB>kind``) replaces ``NAMES``. A file that lacks a column, a slot or the mask
is a one-line error naming the file, the line and the fix.

**The released MISGENDERED data** (``--data`` at its folder) is read by
cdsbias.benchmarks.pronoun_fidelity_released, which turns its templates into this module's
slot syntax (a ``{<case>}`` slot per declared form) for :func:`build_rows`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from cdsbias.benchmarks.pronoun_fidelity_released import SOURCE as RELEASE_SOURCE
from cdsbias.cds.pronoun_families import CASES, FAMILIES, PronounFamily
from cdsbias.errors import CdsbiasError
from cdsbias.io import read_utf8
from cdsbias.scoring import MASK_PLACEHOLDER

#: The declaration that opens every generated template.
DECLARATION = "{name}'s pronouns are {pronouns}."
#: ``(case, body)``: the sentence after the declaration, ``{mask}`` in the case's slot.
TEMPLATES: tuple[tuple[str, str], ...] = (
    ("nominative", "{name} was late today because {mask} missed the bus."),
    ("nominative", "{name} is a nurse, and {mask} will start at the city hospital soon."),
    ("nominative", "{name} loves music. {mask} played the piano at the concert."),
    ("accusative", "{name} won the race, so everyone congratulated {mask}."),
    ("accusative", "{name} was hungry, so I made {mask} a sandwich."),
    ("accusative", "{name} called, and I promised to visit {mask} soon."),
    ("possessive_dependent", "{name} lost {mask} keys at the station."),
    ("possessive_dependent", "{name} is proud of {mask} garden."),
    ("possessive_dependent", "{name} drove to work in {mask} new car."),
    ("possessive_independent", "{name} has a red bike, and the blue one is also {mask}."),
    ("possessive_independent", "{name} said the umbrella by the door is {mask}."),
    ("possessive_independent", "I forgot my pen, so {name} lent me {mask}."),
    ("reflexive", "{name} fell off the ladder and hurt {mask}."),
    ("reflexive", "{name} taught {mask} to cook during the summer."),
    ("reflexive", "{name} looked at {mask} in the mirror."),
)
# Verbs after a nominative mask are past or modal, so that singular they and the
# neopronouns fit the same sentence (*they plays* would give the binary forms away).
#: ``(name, kind)``: the people of the generated set.
NAMES: tuple[tuple[str, str], ...] = (
    ("Casey", "unisex"),
    ("Jordan", "unisex"),
    ("James", "male"),
    ("John", "male"),
    ("Mary", "female"),
    ("Patricia", "female"),
)
_SLOTS = ("{name}", "{pronouns}", "{mask}")
_ROW_COLUMNS = ("template_id", "case", "name", "name_kind", "declared", "sentence", "capitalized")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")


def declared_forms(family: PronounFamily) -> str:
    """A family's declared pronouns as MISGENDERED's explicit declaration writes them:
    nominative/accusative/dependent possessive, ``xe/xem/xyr``."""
    return "/".join(family.forms[:3])


def declaration(family: str) -> str:
    """:func:`declared_forms` of a family of cdsbias.cds.pronoun_families by name."""
    return declared_forms(FAMILIES[family])


def generated_templates() -> list[tuple[str, str]]:
    """``(case, template)`` of the generated set, each opening with ``DECLARATION``."""
    return [(case, f"{DECLARATION} {body}") for case, body in TEMPLATES]


def read_templates(path: Path) -> list[tuple[str, str]]:
    """``(case, template)`` rows of a template file (module docstring).

    Raises:
        CdsbiasError: A missing file or column, an unknown case, or a template without
            ``{name}``, ``{pronouns}`` or exactly one ``{mask}``.
    """
    if not path.is_file():
        raise CdsbiasError(
            f"{path} does not exist; give a TSV file with columns case, template, or the "
            f"folder of the released MISGENDERED data ({RELEASE_SOURCE}; it has no hub dataset)."
        )
    try:
        table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise CdsbiasError(f"{path}: not a readable TSV file ({exc}).") from None
    missing = [column for column in ("case", "template") if column not in table.columns]
    if missing:
        raise CdsbiasError(
            f"{path}: no '{missing[0]}' column; the header must name case and template."
        )
    rows = []
    for line, (case, template) in enumerate(zip(table["case"], table["template"], strict=True), 2):
        if case not in CASES:
            raise CdsbiasError(
                f"{path}:{line}: unknown case '{case}'; use one of {', '.join(CASES)}."
            )
        absent = [slot for slot in _SLOTS if slot not in template]
        if absent:
            what = "declared-pronoun slot {pronouns}" if absent[0] == "{pronouns}" else absent[0]
            raise CdsbiasError(
                f"{path}:{line}: the template has no {what}; write it where the "
                "sentence should hold it."
            )
        if template.count("{mask}") != 1:
            raise CdsbiasError(
                f"{path}:{line}: the template has {template.count('{mask}')} {{mask}} slots; "
                "give exactly one."
            )
        rows.append((case, template))
    if not rows:
        raise CdsbiasError(f"{path}: no templates; add rows under the header case<TAB>template.")
    return rows


def read_names(path: Path) -> list[tuple[str, str]]:
    """``(name, kind)`` rows of a ``names.tsv`` (``name<TAB>kind``, no header)."""
    names = []
    for line, text in enumerate(read_utf8(path).splitlines(), 1):
        fields = text.strip().split("\t")
        if not text.strip() or text.startswith("#"):
            continue
        if len(fields) != 2:
            raise CdsbiasError(f"{path}:{line}: expected name<TAB>kind.")
        names.append((fields[0], fields[1]))
    if not names:
        raise CdsbiasError(f"{path}: no names; one name<TAB>kind a line.")
    return names


def fill(template: str, name: str, family: PronounFamily) -> str:
    """``template`` with the person's name and their declared pronouns: ``{pronouns}``
    (nominative/accusative/dependent possessive) and any ``{<case>}`` slot (the released
    MISGENDERED templates name the forms they declare); ``{mask}`` is left in place."""
    text = template.replace("{name}", name)
    text = text.replace("{pronouns}", declared_forms(family))
    for case in CASES:
        text = text.replace(f"{{{case}}}", family.form(case))
    return text


def build_rows(
    templates: list[tuple[str, str]],
    names: list[tuple[str, str]],
    families: Sequence[str | PronounFamily],
) -> pd.DataFrame:
    """One row per template x name x declared family, the mask as ``MASK_PLACEHOLDER``.

    ``families`` are names of cdsbias.cds.pronoun_families.FAMILIES or families read from
    a file (the released MISGENDERED ``pronouns.csv``).

    Columns: ``template_id``, ``case``, ``name``, ``name_kind``, ``declared`` (family),
    ``sentence`` (filled, masked) and ``capitalized`` (the mask starts a sentence).
    """
    resolved = [FAMILIES[f] if isinstance(f, str) else f for f in families]
    columns: dict[str, list] = {key: [] for key in _ROW_COLUMNS}
    for template_id, (case, template) in enumerate(templates):
        before_mask = template.split("{mask}")[0]
        # The pronouns are filled once per family, the name once per row (3.3 million rows
        # for the released MISGENDERED data). A name never ends in sentence punctuation, so
        # whether the mask starts a sentence does not depend on it.
        filled = [
            (
                family.name,
                fill(template, "{name}", family).replace("{mask}", MASK_PLACEHOLDER),
                bool(_SENTENCE_START.search(fill(before_mask, "{name}", family))),
            )
            for family in resolved
        ]
        for name, kind in names:
            for declared, text, capitalized in filled:
                columns["template_id"].append(template_id)
                columns["case"].append(case)
                columns["name"].append(name)
                columns["name_kind"].append(kind)
                columns["declared"].append(declared)
                columns["sentence"].append(text.replace("{name}", name))
                columns["capitalized"].append(capitalized)
    return pd.DataFrame(columns)
