"""Loading and validating the gendered word pairs and first-name pairs.

The files live in ``cdsbias/resources/wordlists/`` (see the README there for sources and
licences). Every malformed line is reported as ``file:line: problem`` so that a user editing
a list finds the mistake at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cdsbias import resources
from cdsbias.axes.word_files import (
    CONTEXT_PRONOUNS,
    DIRECTIONS,
    data_lines,
    load_word_pairs,
)
from cdsbias.errors import CdsbiasError

__all__ = [
    "AMBIGUITY_CLASSES",
    "CONTEXT_PRONOUNS",
    "DIRECTIONS",
    "WordLists",
    "WordSets",
    "data_lines",
    "load_ambiguous_names",
    "load_name_pairs",
    "load_word_pairs",
    "load_word_sets",
    "load_wordlists",
    "resource_path",
]

AMBIGUITY_CLASSES = ("word", "proper")


def resource_path(filename: str) -> Path:
    """Returns the path of a file shipped in ``cdsbias/resources/wordlists``."""
    return resources.resource_path("wordlists", filename)


class WordSets(dict):
    """Named word sets read from one file; a missing set is a one-line error naming it."""

    def __init__(self, path: Path, sets: dict[str, frozenset[str]]) -> None:
        super().__init__(sets)
        self.path = path

    def __missing__(self, name: str) -> frozenset[str]:
        raise CdsbiasError(f"{self.path}: no [{name}] section; the word list is incomplete")


def load_word_sets(path: Path) -> WordSets:
    """Reads a file of named word sets: a ``[name]`` line, then its words (any lines).

    Raises:
        CdsbiasError: ``file:line: problem`` for words before the first section, a
            section named twice, or an empty section; a missing or non-UTF-8 file.
    """
    path = Path(path)
    sets: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line_number, line in data_lines(path):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            name = stripped[1:-1].strip()
            if name in sets:
                raise CdsbiasError(f"{path}:{line_number}: section [{name}] appears twice")
            current = sets[name] = set()
        elif current is None:
            raise CdsbiasError(f"{path}:{line_number}: words before the first [section] line")
        else:
            current.update(stripped.split())
    for name, words in sets.items():
        if not words:
            raise CdsbiasError(f"{path}: section [{name}] has no words")
    return WordSets(path, {name: frozenset(words) for name, words in sets.items()})


@dataclass(frozen=True)
class WordLists:
    """Everything the substitution engine looks words up in.

    Attributes:
        word_map: Lower-case gendered word -> lower-case substitute (one direction per key).
        lowercase_only: Words swapped only where written in lower case ("god", not "God").
        name_map: Given name (capitalised) -> substitute given name.
        ambiguous_names: Given name -> ``"word"`` or ``"proper"`` (see
            ambiguous_given_names.tsv for what each means).
        male_words: Lower-case words of the male side, used to label report entries.
    """

    word_map: dict[str, str]
    lowercase_only: frozenset[str] = frozenset()
    name_map: dict[str, str] = field(default_factory=dict)
    ambiguous_names: dict[str, str] = field(default_factory=dict)
    male_words: frozenset[str] = frozenset()


def load_name_pairs(path: Path | None = None) -> dict[str, str]:
    """Reads a ``male<TAB>female`` first-name file into a bidirectional map.

    Raises:
        CdsbiasError: ``file:line: problem`` for a malformed line or a name listed twice.
    """
    path = Path(path) if path is not None else resource_path("name_pairs.tsv")
    name_map: dict[str, str] = {}
    for line_number, line in data_lines(path):
        fields = line.split("\t")
        if len(fields) != 2 or not all(name.strip().isalpha() for name in fields):
            raise CdsbiasError(
                f"{path}:{line_number}: expected 'MaleName<TAB>FemaleName', got '{line}'"
            )
        male, female = (name.strip().capitalize() for name in fields)
        for name in (male, female):
            if name in name_map:
                raise CdsbiasError(f"{path}:{line_number}: name '{name}' is listed twice")
        name_map[male] = female
        name_map[female] = male
    return name_map


def load_ambiguous_names(path: Path | None = None) -> dict[str, str]:
    """Reads ``Name<TAB>class`` lines (class ``word`` or ``proper``).

    Raises:
        CdsbiasError: ``file:line: problem`` for a malformed line or an unknown class.
    """
    path = Path(path) if path is not None else resource_path("ambiguous_given_names.tsv")
    ambiguous: dict[str, str] = {}
    for line_number, line in data_lines(path):
        fields = [part.strip() for part in line.split("\t")]
        if len(fields) != 2 or fields[1] not in AMBIGUITY_CLASSES:
            raise CdsbiasError(
                f"{path}:{line_number}: expected 'Name<TAB>word' or 'Name<TAB>proper', got '{line}'"
            )
        ambiguous[fields[0].capitalize()] = fields[1]
    return ambiguous


def load_wordlists(
    word_pairs: Path | None = None,
    name_pairs: Path | None = None,
    ambiguous_names: Path | None = None,
    *,
    names: bool = True,
) -> WordLists:
    """Loads the word pairs and, if ``names``, the name pairs and their ambiguity classes.

    Args:
        word_pairs: Gendered word-pair file; default the shipped list.
        name_pairs: First-name pair file; default the shipped list.
        ambiguous_names: Ambiguous-name file; default the shipped list.
        names: Whether first names are swapped at all.
    """
    word_map, male_words, lowercase_only = load_word_pairs(word_pairs)
    if not names:
        return WordLists(word_map=word_map, lowercase_only=lowercase_only, male_words=male_words)
    return WordLists(
        word_map=word_map,
        lowercase_only=lowercase_only,
        name_map=load_name_pairs(name_pairs),
        ambiguous_names=load_ambiguous_names(ambiguous_names),
        male_words=male_words,
    )
