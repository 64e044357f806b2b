"""The released MISGENDERED data as ``pronoun_fidelity`` rows (``--data`` at its folder).

MISGENDERED (Hossain, Dev & Singh 2023, "MISGENDERED: Limits of Large Language Models in
Understanding Pronouns", ACL 2023) released its data, CC BY 4.0, in
github.com/tamannahossainkay/misgendered-backend (github.com/tamannahossainkay/misgendered
is the project's web page). Its layout, which this module reads as it is:

* ``pronouns.csv``: header ``gender_type,gender,nom,acc,pos_dep,pos_indep,ref``; one row
  per pronoun family (11: he, she, they, thon, e, ae, co, vi, xe, ey, ze), ``gender_type``
  ``binary`` or ``non-binary``. Its *ze* is ze/zir/zir/zirs/zirself, not the ze/hir of
  cdsbias's generated set (cdsbias.cds.pronoun_families): the rows say which forms they used.
* ``names/female.txt``, ``names/male.txt``, ``names/unisex.txt``: one name a line (100, 100
  and 300 in the release).
* ``templates/{explicit,parenth}_template_{2,31,32,41,42,5}.csv``: header
  ``form,template,template_id``; 50 templates each, 10 per form (``nom``, ``acc``,
  ``pos_dep``, ``pos_ind``, ``ref``). A template holds ``{name}``, the declared forms it
  names (``{nom}``, ``{acc}``, ``{pos_dep}``, ``{pos_ind}``, ``{ref}``) and one
  ``{mask_token}``. The file name is the declaration: explicit ("{name}'s pronouns are
  {nom}/{acc}/{pos_dep}.") or parenthetical ("{name} ({nom}/{acc}) ..."), and the forms
  declared (2: nom/acc; 31: +pos_ind; 32: +pos_dep; 41: +pos_ind/ref; 42: +pos_dep/ref;
  5: all five). ``templates/templates.csv`` (header ``template,form,template_id``) is the
  list they were made from, without a declaration.

Mapping onto the benchmark's rows: each template x name x family is one row; ``form``
becomes the row's ``case``; the template's slots are filled with the family's forms and
``{mask_token}`` becomes the mask. Two repairs, both stated: the explicit templates write
``{name}/'s pronouns``, which is filled as ``{name}'s pronouns`` (the paper's declaration);
``template_id`` is blank or ``N.0`` in a few rows of ``explicit_template_42.csv``, so a
row's ``release_template`` is its position in its file (which equals the id wherever one is
given). A folder loads the twelve declaration files; ``templates.csv`` is read only when
``--data`` names it (declaration ``none``). No hub dataset of MISGENDERED exists (checked
on the Hugging Face hub and the authors' repositories, 2026-11): ``--data`` takes files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cdsbias.cds.pronoun_families import CASES, PronounFamily
from cdsbias.errors import CdsbiasError
from cdsbias.io import read_csv, read_utf8

SOURCE = "github.com/tamannahossainkay/misgendered-backend"
#: The release's form names -> the benchmark's cases.
FORMS = dict(zip(("nom", "acc", "pos_dep", "pos_ind", "ref"), CASES, strict=True))
#: ``pronouns.csv``'s header (its ``pos_indep`` is the templates' ``{pos_ind}``).
PRONOUN_COLUMNS = ("gender_type", "gender", "nom", "acc", "pos_dep", "pos_indep", "ref")
NAME_KINDS = ("unisex", "female", "male")
_DECLARATION_FILE = re.compile(r"^(explicit|parenth)_template_(2|31|32|41|42|5)\.csv$")
_SLOT = re.compile(r"\{[^{}]*\}")
_LAYOUT = (
    f"the released MISGENDERED folder ({SOURCE}) holds pronouns.csv, "
    "names/{female,male,unisex}.txt and templates/*.csv; clone it whole"
)
#: The fix of a release file that is not UTF-8 (an edited copy saved in another encoding).
_UTF8_FIX = "save it as UTF-8, or clone the release again"


@dataclass(frozen=True)
class ReleasedTemplate:
    """One template of the release in the benchmark's slot syntax."""

    case: str
    #: ``{name}``, ``{mask}`` and ``{<case>}`` slots (cdsbias.benchmarks.pronoun_fidelity_data).
    template: str
    #: ``explicit_5``, ``parenthetical_3_1``, ..., or ``none`` (templates.csv).
    declaration: str
    #: Position in its file (the release's ``template_id`` where given).
    release_template: int


def release_root(path: Path) -> Path | None:
    """The release folder ``path`` is, or whose ``templates/`` folder or template file it
    is; None for anything else (a cdsbias template file or folder)."""
    if path.is_dir():
        if any((path / part).exists() for part in ("pronouns.csv", "names", "templates")):
            return path
        if path.name == "templates" and (path.parent / "pronouns.csv").is_file():
            return path.parent
        return None
    if path.suffix == ".csv" and path.parent.name == "templates":
        return path.parent.parent
    return None


def read_families(path: Path) -> dict[str, PronounFamily]:
    """``{gender: family}`` of ``pronouns.csv``, in file order.

    Raises:
        CdsbiasError: A missing file or column, an empty form, a family given twice.
    """
    if not path.is_file():
        raise CdsbiasError(f"{path} does not exist; {_LAYOUT}.")
    header, rows = read_csv(path, fix=_UTF8_FIX)
    missing = [c for c in PRONOUN_COLUMNS if c not in header]
    if missing:
        raise CdsbiasError(
            f"{path}: no column {', '.join(missing)}; the header must be "
            f"{','.join(PRONOUN_COLUMNS)} (the release's pronouns.csv)."
        )
    families: dict[str, PronounFamily] = {}
    for line, row in rows:
        forms = [row[c].strip() for c in PRONOUN_COLUMNS[2:]]
        name = row["gender"].strip()
        if not name or not all(forms):
            raise CdsbiasError(f"{path}:{line}: an empty family name or form; fill all five.")
        if name in families:
            raise CdsbiasError(f"{path}:{line}: family '{name}' is given twice; keep one.")
        kind = row["gender_type"].strip()
        if kind not in ("binary", "non-binary"):
            raise CdsbiasError(f"{path}:{line}: gender_type '{kind}'; use binary or non-binary.")
        families[name] = PronounFamily(
            name, *forms, plural_agreement=name == "they", binary=kind == "binary"
        )
    if not families:
        raise CdsbiasError(f"{path}: no pronoun families; one row per family under the header.")
    return families


def read_names(folder: Path, per_kind: int = 0) -> list[tuple[str, str]]:
    """``(name, kind)`` from ``names/{unisex,female,male}.txt``; ``per_kind``: the first N.

    Raises:
        CdsbiasError: A missing or empty names file.
    """
    names = []
    for kind in NAME_KINDS:
        path = folder / f"{kind}.txt"
        if not path.is_file():
            raise CdsbiasError(f"{path} does not exist; {_LAYOUT}.")
        found = [line.strip() for line in read_utf8(path, fix=_UTF8_FIX).splitlines()]
        found = [name for name in found if name]
        if not found:
            raise CdsbiasError(f"{path}: no names; one name a line.")
        names += [(name, kind) for name in (found[:per_kind] if per_kind else found)]
    return names


def declaration_type(path: Path) -> str:
    """``explicit_template_31.csv`` -> ``explicit_3_1``; ``templates.csv`` -> ``none``."""
    if path.name == "templates.csv":
        return "none"
    match = _DECLARATION_FILE.match(path.name)
    if match is None:
        raise CdsbiasError(
            f"{path}: not a MISGENDERED template file; the release names them "
            "{explicit,parenth}_template_{2,31,32,41,42,5}.csv or templates.csv."
        )
    kind = "explicit" if match[1] == "explicit" else "parenthetical"
    return f"{kind}_{'_'.join(match[2])}"


def read_templates(path: Path) -> list[ReleasedTemplate]:
    """The templates of one release file, in the benchmark's slot syntax (module docstring).

    Raises:
        CdsbiasError: A missing column, an unknown form or slot, a template without
            ``{name}`` or with other than one ``{mask_token}`` (file and line named).
    """
    declaration = declaration_type(path)
    header, rows = read_csv(path, fix=_UTF8_FIX)
    missing = [c for c in ("form", "template") if c not in header]
    if missing:
        raise CdsbiasError(
            f"{path}: no '{missing[0]}' column; the release's header is form,template,template_id."
        )
    templates = []
    for position, (line, row) in enumerate(rows):
        form, text = row["form"].strip(), row["template"].strip()
        if form not in FORMS:
            raise CdsbiasError(
                f"{path}:{line}: unknown form '{form}'; use one of {', '.join(FORMS)}."
            )
        slots = set(_SLOT.findall(text))
        unknown = sorted(slots - {"{name}", "{mask_token}"} - {f"{{{f}}}" for f in FORMS})
        if unknown:
            raise CdsbiasError(
                f"{path}:{line}: unknown slot {unknown[0]}; the release's slots are "
                "{name}, {mask_token}, {nom}, {acc}, {pos_dep}, {pos_ind}, {ref}."
            )
        if "{name}" not in slots or text.count("{mask_token}") != 1:
            what = "no {name}" if "{name}" not in slots else "not exactly one {mask_token}"
            raise CdsbiasError(
                f"{path}:{line}: the template has {what}; write one where the sentence "
                "should hold it."
            )
        text = text.replace("{name}/'s", "{name}'s").replace("{mask_token}", "{mask}")
        for release_form, case in FORMS.items():
            text = text.replace(f"{{{release_form}}}", f"{{{case}}}")
        templates.append(ReleasedTemplate(FORMS[form], text, declaration, position))
    if not templates:
        raise CdsbiasError(f"{path}: no templates; add rows under form,template,template_id.")
    return templates


def template_files(path: Path, root: Path) -> list[Path]:
    """The template files ``--data`` names: one file, or the twelve declaration files.

    Raises:
        CdsbiasError: No ``templates/`` folder or no declaration file in it.
    """
    if path.is_file():
        return [path]
    folder = root / "templates"
    files = sorted(p for p in folder.glob("*.csv") if _DECLARATION_FILE.match(p.name))
    if not files:
        raise CdsbiasError(f"{folder}: no {{explicit,parenth}}_template_*.csv files; {_LAYOUT}.")
    return files


def load_release(
    path: Path, names_per_kind: int = 0
) -> tuple[list[ReleasedTemplate], list[tuple[str, str]], dict[str, PronounFamily]]:
    """Templates, names and families of the release at (or holding) ``path``.

    Every file is read and checked before rows are built.
    """
    root = release_root(path)
    if root is None:
        raise CdsbiasError(f"{path} is not in the released MISGENDERED layout; {_LAYOUT}.")
    if not path.exists():
        raise CdsbiasError(f"{path} does not exist; name a file of {root / 'templates'}.")
    families = read_families(root / "pronouns.csv")
    names = read_names(root / "names", names_per_kind)
    templates = [t for file in template_files(path, root) for t in read_templates(file)]
    return templates, names, families
