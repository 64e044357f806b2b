"""The word-list files every axis and language reads: lines, words, gendered word pairs.

``data_lines`` reads any of the project's word-list files (UTF-8, ``#`` comments, blank
lines skipped) with ``file:line`` errors; ``load_word_pairs`` reads the gender axis's
``male<TAB>female[<TAB>direction]`` pairs (``cdsbias/resources/wordlists``), which CDS, the
post-hoc methods' fit sentences and Context-Debias all start from (cdsbias.axes.gender).
"""

from __future__ import annotations

from pathlib import Path

from cdsbias import resources
from cdsbias.errors import CdsbiasError

# Decided by context in cdsbias.cds.languages.en_pronouns, so a word list must not map them blindly.
CONTEXT_PRONOUNS = frozenset({"his", "her", "him", "hers"})
DIRECTIONS = ("both", "m2f", "f2m", "lower")
#: The gender axis's word-pair file, in cdsbias/resources/wordlists.
GENDERED_WORD_PAIRS = "gendered_word_pairs.tsv"


def data_lines(path: Path) -> list[tuple[int, str]]:
    """Returns (line number, line) for non-blank, non-comment lines of a word-list file;
    a missing, unreadable or non-UTF-8 file is a one-line error naming it."""
    try:
        # utf-8-sig: a byte-order mark (spreadsheets save one) is not part of the first word.
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CdsbiasError(f"Word list {path} not found") from None
    except OSError as exc:
        raise CdsbiasError(f"Word list {path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line_number = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise CdsbiasError(f"{path}:{line_number}: not valid UTF-8") from None
    return [
        (number, line.rstrip("\r"))
        for number, line in enumerate(text.split("\n"), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _clean_word(word: str, path: Path, line_number: int) -> str:
    """Normalises one entry: lower case, and 'mr.' is stored as 'mr' (the dot stays in text)."""
    cleaned = word.strip().lower().rstrip(".")
    if not cleaned or any(char.isspace() for char in cleaned):
        raise CdsbiasError(f"{path}:{line_number}: '{word}' is not a single word")
    return cleaned


def load_word_pairs(
    path: Path | None = None,
) -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    """Reads a ``male<TAB>female[<TAB>direction]`` file into a one-way lookup.

    Args:
        path: The file; default the shipped ``gendered_word_pairs.tsv``.

    Returns:
        ``(word_map, male_words, lowercase_only)``: each source word's substitute, the
        male-side words, and the words of ``lower`` lines.

    Raises:
        CdsbiasError: ``file:line: problem`` for a malformed line, an unknown direction, a
            context pronoun, or a word mapped to two different substitutes.
    """
    path = (
        Path(path)
        if path is not None
        else resources.resource_path("wordlists", GENDERED_WORD_PAIRS)
    )
    word_map: dict[str, str] = {}
    defined_at: dict[str, int] = {}
    male_words: set[str] = set()
    lowercase_only: set[str] = set()
    for line_number, line in data_lines(path):
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise CdsbiasError(
                f"{path}:{line_number}: expected 'male<TAB>female[<TAB>direction]', "
                f"got {len(fields)} tab-separated field(s)"
            )
        male, female = (_clean_word(word, path, line_number) for word in fields[:2])
        direction = fields[2].strip() if len(fields) == 3 else "both"
        if direction not in DIRECTIONS:
            raise CdsbiasError(
                f"{path}:{line_number}: direction '{direction}' is not one of "
                f"{', '.join(DIRECTIONS)}"
            )
        if male == female:
            raise CdsbiasError(f"{path}:{line_number}: '{male}' is paired with itself")
        if {male, female} & CONTEXT_PRONOUNS:
            raise CdsbiasError(
                f"{path}:{line_number}: his/her/him/hers are decided by context and cannot "
                "be listed"
            )
        mappings = []
        if direction in ("both", "m2f", "lower"):
            mappings.append((male, female))
        if direction in ("both", "f2m", "lower"):
            mappings.append((female, male))
        if direction == "lower":
            lowercase_only.update((male, female))
        for source, target in mappings:
            if source in word_map and word_map[source] != target:
                raise CdsbiasError(
                    f"{path}:{line_number}: '{source}' already maps to '{word_map[source]}' "
                    f"(line {defined_at[source]})"
                )
            word_map[source] = target
            defined_at[source] = line_number
        male_words.add(male)
    if not word_map:
        raise CdsbiasError(f"{path}: no word pairs found")
    return word_map, frozenset(male_words), frozenset(lowercase_only)
