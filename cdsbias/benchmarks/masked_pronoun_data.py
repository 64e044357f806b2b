"""WinoBias-style files: bracketed pronoun lines parsed into masked rows, with their quirks.

Shared by WinoBias (English) and DaWinoBias (Danish); a :class:`PronounInventory` names
the pronoun forms of a language.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MASK_PLACEHOLDER

FEMALE, MALE, UNKNOWN = "female", "male", "UNK"


CONDITIONS = ("pro", "anti")


PREDICTIONS = ("top1", "choice")


TEXT_STYLES = ("genda", "original")


@dataclass(frozen=True)
class PronounInventory:
    """The gendered pronouns of a language, grouped by grammatical slot.

    Attributes:
        language: Language code.
        slots: ``{slot: (female forms, male forms)}``; a form may only be gold in one slot.
        gold_slot: ``{gold form: slot}`` (a form that is in several slots maps to one).
        priority: GenDa Lens' search order for the pronoun to mask (``idx_pron``).
    """

    language: str
    slots: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]
    gold_slot: dict[str, str]
    priority: tuple[str, ...]

    @property
    def female(self) -> frozenset[str]:
        return frozenset(f for forms, _ in self.slots.values() for f in forms)

    @property
    def male(self) -> frozenset[str]:
        return frozenset(m for _, forms in self.slots.values() for m in forms)

    def gender(self, form: str) -> str:
        """``female``, ``male`` or ``UNK`` for a (lower-case) token."""
        if form in self.female:
            return FEMALE
        if form in self.male:
            return MALE
        return UNKNOWN


# --------------------------------------------------------------------------- parsing
_GROUP = re.compile(r"\[([^\[\]]*)\]")


_NUMBER = re.compile(r"^(\d+)\s+")


_OPENING = "\"'([{«"


_CLOSING = ".,;:!?\"')]}»"


def genda_tokens(text: str) -> str:
    """GenDa Lens' text as the model sees it: lower-cased spaCy tokens joined by spaces.

    GenDa Lens runs spaCy's Danish tokenizer, lower-cases the tokens, drops the bracket
    tokens and joins the rest with ``" "``. This rule reproduces that for WinoBias-style
    sentences without spaCy: leading/trailing punctuation is split off each word (a run of
    dots such as ".." stays one token), word-internal marks ("e-mail", "3.5") stay, and a
    run of ``n > 1`` spaces becomes spaCy's whitespace token of ``n - 1`` spaces. It gives
    the same string as spaCy 3.8 ``spacy.blank("da")`` on all 1,348 DaWinoBias sentences.
    """
    tokens: list[str] = []
    extra_spaces = 0
    for word in text.lower().split(" "):
        if not word:
            extra_spaces += 1
            continue
        if extra_spaces:
            tokens.append(" " * extra_spaces)
            extra_spaces = 0
        head: list[str] = []
        tail: list[str] = []
        while len(word) > 1 and word[0] in _OPENING:
            head.append(word[0])
            word = word[1:]
        while len(word) > 1 and word[-1] in _CLOSING:
            if word.endswith(".."):
                dots = len(word) - len(word.rstrip("."))
                if dots == len(word):
                    break
                tail.insert(0, word[-dots:])
                word = word[:-dots]
                continue
            tail.insert(0, word[-1])
            word = word[:-1]
        tokens.extend([*head, word, *tail])
    return " ".join(tokens)


def parse_line(
    line: str,
    inventory: PronounInventory,
    *,
    source: str,
    line_number: int,
    selection: str = "first",
    text_style: str = "original",
) -> dict[str, Any] | None:
    """Parses one WinoBias-format line; returns ``None`` for a blank line.

    Args:
        line: ``[<n> ]<sentence with [bracketed] entity and pronoun>``.
        inventory: The language's pronouns.
        source: File name for error messages.
        line_number: 1-based line number for error messages.
        selection: ``first`` masks the first bracketed pronoun; ``genda`` masks the pronoun
            GenDa Lens picks: the first form of ``inventory.priority`` occurring anywhere in
            the sentence, bracketed or not.
        text_style: ``original`` keeps the text; ``genda`` lower-cases it and spaces off
            punctuation as GenDa Lens' spaCy tokenization does.

    Raises:
        CdsbiasError: Unbalanced or empty brackets, or no pronoun (message has file:line).
    """
    where = f"{source}:{line_number}"
    # Ends only (CR, trailing spaces): inner spacing matters to GenDa Lens' text.
    text = line.strip().replace("\t", " ")
    if not text:
        return None
    number_match = _NUMBER.match(text)
    number = int(number_match.group(1)) if number_match else None
    if number_match:
        text = text[number_match.end() :]
    clean = ""
    groups: list[tuple[int, int, str]] = []
    position = 0
    for match in _GROUP.finditer(text):
        inner = " ".join(match.group(1).split())
        if not inner:
            raise CdsbiasError(f"{where}: empty [] in {line.strip()!r}.")
        clean += text[position : match.start()]
        groups.append((len(clean), len(clean) + len(inner), inner))
        clean += inner
        position = match.end()
    clean += text[position:]
    if "[" in clean or "]" in clean:
        raise CdsbiasError(f"{where}: unbalanced or nested brackets in {line.strip()!r}.")
    forms = set(inventory.gold_slot)
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(sorted(forms, key=len, reverse=True)) + r")(?!\w)", re.IGNORECASE
    )
    occurrences = [(m.start(), m.end(), m.group(0)) for m in pattern.finditer(clean)]
    bracketed = [g for g in groups if g[2].lower() in forms]
    if not occurrences:
        raise CdsbiasError(
            f"{where}: no gendered pronoun ({', '.join(sorted(forms))}) in {line.strip()!r}."
        )
    quirks: list[str] = []
    if selection == "genda":
        lowered = [o[2].lower() for o in occurrences]
        chosen_form = next(f for f in inventory.priority if f in lowered)
        start, end, written = occurrences[lowered.index(chosen_form)]
        if not any(g[0] == start for g in bracketed):
            quirks.append("unbracketed pronoun")
    elif bracketed:
        start, end, written = bracketed[0]
    else:
        start, end, written = occurrences[0]
        quirks.append("unbracketed pronoun")
    if len(occurrences) > 1:
        quirks.append("several pronouns")
    gold = written.lower()
    entity = next((g[2] for g in groups if g[2].lower() not in forms), "")
    if text_style == "genda":
        # The pronoun becomes a placeholder word, so punctuation next to it splits off too.
        sentinel = "\x00"
        masked = genda_tokens(clean[:start] + sentinel + clean[end:])
        masked = masked.replace(sentinel, MASK_PLACEHOLDER)
    else:
        masked = " ".join(f"{clean[:start]}{MASK_PLACEHOLDER}{clean[end:]}".split())
    return {
        "line": line_number,
        "number": number,
        "sentence": " ".join(clean.split()),
        "masked": masked,
        "pronoun": gold,
        "capitalized": written[:1].isupper() and text_style != "genda",
        "gender": inventory.gender(gold),
        "slot": inventory.gold_slot[gold],
        "entity": entity,
        "quirk": "; ".join(quirks),
    }


def read_file(
    path: str | Path,
    inventory: PronounInventory,
    *,
    selection: str = "first",
    text_style: str = "original",
) -> pd.DataFrame:
    """Reads a WinoBias-format file (any line endings, UTF-8) into rows."""
    path = Path(path)
    if not path.is_file():
        raise CdsbiasError(f"{path} not found.")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CdsbiasError(f"{path} is not UTF-8 text ({exc}).") from exc
    rows = []
    # splitlines() handles LF, CRLF and lone CR, as GenDa Lens' read().splitlines().
    for number, line in enumerate(text.splitlines(), start=1):
        row = parse_line(
            line,
            inventory,
            source=str(path),
            line_number=number,
            selection=selection,
            text_style=text_style,
        )
        if row is not None:
            row["file"] = path.name
            rows.append(row)
    if not rows:
        raise CdsbiasError(f"{path} has no sentences.")
    return pd.DataFrame.from_records(rows)


def warn_quirks(rows: pd.DataFrame, name: str) -> None:
    """One warning listing the rows whose pronoun was not bracketed."""
    odd = rows[rows["quirk"].str.contains("unbracketed", regex=False)]
    if len(odd):
        where = ", ".join(f"{r.file}:{r.line}" for r in odd.head(5).itertuples())
        more = f" and {len(odd) - 5} more" if len(odd) > 5 else ""
        warnings.warn(
            f"{name}: {len(odd)} line(s) have an unbracketed pronoun ({where}{more}); it was "
            "found as a whole word and masked.",
            stacklevel=2,
        )
