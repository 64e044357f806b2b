"""ABC files of GenDa Lens: triples of reflexive / anti-reflexive sentences, quirks kept."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from cdsbias.errors import CdsbiasError

FILES = {"female": "abc_fem_sents.txt", "male": "abc_male_sents.txt"}


REFLEXIVES = ("sin", "sit", "sine")


#: GenDa Lens' list of reflexive tokens (WordPiece and SentencePiece forms). Byte-level BPE
#: ("Ġsin") is our extension: the reference finds no pronoun there and crashes.
PRONOUN_TOKENS = (*REFLEXIVES, *(f"▁{p}" for p in REFLEXIVES), *(f"Ġ{p}" for p in REFLEXIVES))


ANTI_REFLEXIVES = {"male": "hans", "female": "hendes"}


_SEPARATOR = re.compile(r"^-{3,}$")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


_WORD_CORE = re.compile(r"^(\W*)(.*?)(\W*)$")


def _split_lines(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise CdsbiasError(f"Cannot read ABC data {path}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError as exc:
        raise CdsbiasError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    # Mixed LF / CRLF / CR files keep their line numbers.
    return _LINE_BREAK.split(text)


def _pronoun_word(words: list[str]) -> int | None:
    for index, word in enumerate(words):
        if _WORD_CORE.match(word).group(2).lower() in REFLEXIVES:
            return index
    return None


def read_abc_file(path: str | Path, occupation_group: str) -> pd.DataFrame:
    """Parses a GenDa Lens ABC file: triples of sentences separated by ``---`` lines.

    Each triple is the reflexive sentence, then the same sentence with ``hans``, then with
    ``hendes``. Whitespace runs (stray spaces, tabs) become one space, blank lines are
    ignored, LF/CRLF/CR line ends may be mixed and the last line may lack a newline.

    Args:
        path: The file.
        occupation_group: ``"female"`` or ``"male"`` (the occupations' stereotypical gender),
            or any label for a file that is not split by occupation.

    Returns:
        One row per triple: ``file, line, occupation_group, reflexive, pronoun,
        anti_male, anti_female``.

    Raises:
        CdsbiasError: ``file:line`` of a triple that is incomplete, has no reflexive
            pronoun, or whose hans/hendes sentences do not match the reflexive one.
    """
    path = Path(path)
    rows: list[dict[str, Any]] = []
    group: list[tuple[int, str]] = []

    def close(at_line: int) -> None:
        if not group:
            return
        if len(group) != 3:
            raise CdsbiasError(
                f"{path}:{group[0][0]}: expected 3 sentences (sin/sit/sine, hans, hendes) "
                f"before the '---' at line {at_line}, found {len(group)}."
            )
        (line, reflexive), (male_line, male), (female_line, female) = group
        words = reflexive.split(" ")
        where = _pronoun_word(words)
        if where is None:
            raise CdsbiasError(
                f"{path}:{line}: no reflexive pronoun (sin/sit/sine) in {reflexive!r}."
            )
        lead, core, tail = _WORD_CORE.match(words[where]).groups()
        for variant_line, variant, pronoun in (
            (male_line, male, "hans"),
            (female_line, female, "hendes"),
        ):
            expected = " ".join([*words[:where], lead + pronoun + tail, *words[where + 1 :]])
            if variant.lower() != expected.lower():
                raise CdsbiasError(
                    f"{path}:{variant_line}: expected {expected!r} (line {line} with "
                    f"'{pronoun}'), found {variant!r}."
                )
        rows.append(
            {
                "file": path.name,
                "line": line,
                "occupation_group": occupation_group,
                "reflexive": reflexive,
                "pronoun": core.lower(),
                "anti_male": male,
                "anti_female": female,
            }
        )
        group.clear()

    lines = _split_lines(path)
    for number, raw in enumerate(lines, start=1):
        line = " ".join(raw.split())
        if not line:
            continue
        if _SEPARATOR.match(line):
            close(number)
        else:
            group.append((number, line))
    close(len(lines))
    if not rows:
        raise CdsbiasError(f"{path}: no ABC sentence triples found.")
    return pd.DataFrame(rows)
