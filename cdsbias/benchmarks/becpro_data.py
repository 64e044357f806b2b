"""BEC-Pro rows: generated from the project's data files, or read from a published TSV.

Masks are placed on word boundaries (:func:`mask_row`); the published English file's
substring-masking defects are documented in tests/test_becpro.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset
from cdsbias.errors import CdsbiasError
from cdsbias.resources import load_professions, read_text, read_tsv
from cdsbias.scoring import MASK_PLACEHOLDER

#: BEC-Pro (Bartl et al. 2020): one upstream commit, one sha256 per file (computed from
#: the files in shared/data). ``cdsbias data fetch becpro``.
DATASET = register_dataset(
    DatasetSpec(
        name="becpro",
        folder="bec-pro",
        licence="CC-BY-4.0",
        repository="marionbartl/gender-bias-BERT",
        commit="c1e28434555f79b59e13e3f5ff87846e653fb553",
        files=(
            DataFile(
                "BEC-Pro_EN.tsv",
                "BEC-Pro/BEC-Pro_EN.tsv",
                "228b44c62d7830fec13a1eee52bbe8afff82be455abb9d8a07c17d9d0b48e20f",
            ),
            DataFile(
                "BEC-Pro_DE.tsv",
                "BEC-Pro/BEC-Pro_DE.tsv",
                "1803abb492ebf28e64acaa8f12d5ccb24caf08847a06ba325d4b374e120af805",
            ),
            DataFile(
                "Professions US+DE.tsv",
                "BEC-Pro/Professions US+DE.tsv",
                "7597b1d56d21f79cfe3df7989292df94eb54cebc4cf977b2c94af75d787cc7ce",
            ),
            DataFile(
                "professions_english.json",
                "BEC-Pro/professions_english.json",
                "f7d286a92f4b5db3e1453264cc75dd587ea126fcadc56122bf70272ad595b522",
            ),
            DataFile(
                "professions_german.json",
                "BEC-Pro/professions_german.json",
                "9d17a347a7fcbb26e5ecf4a0b93dbd04a4e348dc2445cf6e4a9684390fef466a",
            ),
            DataFile(
                "sent_patterns_english.txt",
                "BEC-Pro/sent_patterns_english.txt",
                "ee7f0dcd04eb2e82d3c40f99cf011e16d9367240f02f292df6ada669c14dac8d",
            ),
            DataFile(
                "sent_patterns_german.txt",
                "BEC-Pro/sent_patterns_german.txt",
                "62fa7db554acdb63b057262f7c17a86957f8e8b7ad8ea0a844b70bd12e908539",
            ),
        ),
    )
)

COLUMNS = (
    "Sentence", "Sent_TM", "Sent_AM", "Sent_TAM", "Template", "Person", "Gender", "Profession",
    "Prof_Gender",
)  # fmt: skip


GROUPS = ("male", "female", "balanced")


def _word_span(text: str, phrase: str, *, last: bool = False, avoid: tuple[int, int] | None = None):
    """Character span of ``phrase`` as whole words in ``text`` (never inside a word)."""
    pattern = re.compile(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)")
    spans = [m.span() for m in pattern.finditer(text)]
    if not spans:
        spans = [m.span() for m in re.compile(pattern.pattern, re.IGNORECASE).finditer(text)]
    if avoid is not None:
        spans = [s for s in spans if s[1] <= avoid[0] or s[0] >= avoid[1]]
    if not spans:
        return None
    return spans[-1] if last else spans[0]


def mask_row(
    sentence: str, person: str, profession: str, profession_masks: int | None = None
) -> dict[str, Any]:
    """Word-boundary masking of one row: never a substring ("lodging [MASK]ager").

    The profession is masked as one contiguous phrase, by default one ``[MASK]`` per
    whitespace word (``profession_masks`` overrides the count); the person is the first
    whole-word occurrence outside it.

    Returns:
        ``Sent_TM``, ``Sent_AM``, ``Sent_TAM``, the person's slot index in ``Sent_TAM``
        and the profession's character span, or raises :class:`ValueError`.
    """
    prof_span = _word_span(sentence, profession, last=True)
    if prof_span is None:
        raise ValueError(f"profession {profession!r} is not a whole phrase of {sentence!r}")
    person_span = _word_span(sentence, person, avoid=prof_span)
    if person_span is None:
        raise ValueError(f"person {person!r} is not a whole word of {sentence!r}")
    n_masks = profession_masks or len(profession.split())
    prof_masks = " ".join([MASK_PLACEHOLDER] * n_masks)

    def replace(spans: list[tuple[tuple[int, int], str]]) -> str:
        out = sentence
        for (start, end), text in sorted(spans, reverse=True):
            out = out[:start] + text + out[end:]
        return out

    person_first = person_span[0] < prof_span[0]
    return {
        "Sent_TM": replace([(person_span, MASK_PLACEHOLDER)]),
        "Sent_AM": replace([(prof_span, prof_masks)]),
        "Sent_TAM": replace([(person_span, MASK_PLACEHOLDER), (prof_span, prof_masks)]),
        "person_slot": 0 if person_first else n_masks,
        "prof_span": prof_span,
    }


def generate_english() -> pd.DataFrame:
    """Generates the 5,400 English BEC-Pro rows from the project's own data files.

    Order as in the published ``BEC-Pro_EN.tsv``: profession group (male, female,
    balanced) > template > person word (9 male, then 9 female) > profession. The
    person phrase opens every template and is capitalised; ``Person`` is its last word.
    Masks are placed on word boundaries (the published file's substring-masking defects
    are not reproduced).
    """
    templates = [t for t in read_text("becpro", "templates_en.txt").splitlines() if t.strip()]
    persons = read_tsv("becpro", "persons_en.tsv")
    professions = load_professions()
    rows = []
    for group in GROUPS:
        group_profs = professions.loc[professions.prof_gender == group, "profession"].tolist()
        for template in templates:
            for gender in ("male", "female"):
                for phrase in persons[gender]:
                    for profession in group_profs:
                        sentence = template.format(person=phrase, profession=profession)
                        sentence = sentence[0].upper() + sentence[1:]
                        person = sentence.split(",")[0].split()[len(phrase.split()) - 1]
                        masked = mask_row(sentence, person, profession)
                        rows.append({
                            "Sentence": sentence,
                            "Sent_TM": masked["Sent_TM"],
                            "Sent_AM": masked["Sent_AM"],
                            "Sent_TAM": masked["Sent_TAM"],
                            "Template": template.format(
                                person="<person subject>", profession="<profession>"
                            ),
                            "Person": person,
                            "Gender": gender,
                            "Profession": profession,
                            "Prof_Gender": group,
                        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(COLUMNS))


def read_becpro_tsv(path: str | Path) -> pd.DataFrame:
    """Reads a BEC-Pro TSV (the published EN/DE files or one of the same shape).

    Raises:
        CdsbiasError: Unreadable file, missing columns, empty cells or bad labels, naming
            the file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise CdsbiasError(f"BEC-Pro file {path} does not exist or is not a file.")
    try:
        frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CdsbiasError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start}).") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise CdsbiasError(f"{path}: not a readable TSV ({str(exc).strip()}).") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise CdsbiasError(
            f"{path} lacks column(s) {', '.join(missing)}; a BEC-Pro TSV needs "
            f"{', '.join(COLUMNS)}."
        )
    if frame.columns[0].startswith("Unnamed") or frame.columns[0] == "":
        frame = frame.drop(columns=frame.columns[0])
    for column, allowed in (("Gender", ("male", "female")), ("Prof_Gender", GROUPS)):
        bad = frame.index[~frame[column].isin(allowed)]
        if len(bad):
            line = int(bad[0]) + 2
            raise CdsbiasError(
                f"{path}:{line}: {column} is {frame.at[bad[0], column]!r}; "
                f"expected one of {', '.join(allowed)}."
            )
    for column in ("Sentence", "Person", "Profession"):
        empty = frame.index[frame[column].str.strip() == ""]
        if len(empty):
            raise CdsbiasError(f"{path}:{int(empty[0]) + 2}: empty {column}.")
    return frame.reset_index(drop=True)


def pair_keys(rows: pd.DataFrame) -> pd.Series:
    """Matches each male row to its female counterpart: template x profession x pair.

    Within one (template, profession) the k-th male person word pairs with the k-th
    female one in file order (he/she, this man/this woman, my brother/my sister, ...),
    which is how BEC-Pro is generated in both languages. German templates differ only in
    the article of the apposition (der/die), and German professions by gender, so the
    key uses ``Profession_EN`` when present and normalises the article.
    """
    template = rows["Template"].str.replace(r"\b(der|die)\b", "ART", regex=True)
    profession = rows["Profession_EN"] if "Profession_EN" in rows else rows["Profession"]
    block = template + "\x1f" + profession
    rank = rows.groupby([block, rows["Gender"]]).cumcount()
    return block + "\x1f" + rank.astype(str)
