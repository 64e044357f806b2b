"""The example sentences of Context-Debias: attribute sentences and stereotype sentences.

Kaneko & Bollegala (2021, EACL), "Debiasing Pre-trained Contextualised Embeddings"; the
selection follows their ``src/preprocess.py`` (kanekomasahiro/context-debias):

* a line is used when it has more than 1 and at most ``max_words`` (their ``block_size``,
  128) whitespace-separated words;
* words are matched lower-cased;
* a line with attribute words of exactly **one** class (e.g. only male words) is an
  *attribute sentence* of that class, read at one of those words; a line with words of two
  classes is dropped;
* a line with no attribute word and at least one stereotype word is a *stereotype
  sentence*, once per distinct stereotype word in it, read at that word's first occurrence.

Differences, each deliberate:

* their code reads the attribute word that comes last in Python's set order (arbitrary);
  here the first attribute word of the line;
* multi-word stereotype entries ("steel worker", BEC-Pro's professions) are matched as word
  sequences; their whole-word set match only ever finds single words;
* a word's pieces are found from the fast tokenizer's character offsets, not by searching
  for the word's token n-gram with four fallbacks.

Defaults: attribute words are the run's bias axis's (``bias_axis``, cdsbias.axes), one
class per group: for gender the male side and the female side of the axis's word pairs
(the project's gendered word pairs plus bias-bench's his/him, her) and the unpaired "hers"
(``cdsbias.axes.gender.UNPAIRED_WORDS``); for race or religion each group's words (three
classes: the loss sums its debiasing term over any number of classes). Stereotype words are
the BEC-Pro professions (``cdsbias/resources/becpro/professions.tsv``) on every axis.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError

_WORD = re.compile(r"\w+(?:['’]\w+)*")
#: What joins several words on one line of a word list (a word or phrase holds none).
_JOINED = re.compile(r"[,;\t]")
_JOINER_NAMES = {",": "a comma", ";": "a semicolon", "\t": "a tab"}


@dataclass(frozen=True)
class Example:
    """A tokenized sentence and the positions of the word it is read at."""

    input_ids: tuple[int, ...]
    positions: tuple[int, ...]


@dataclass
class ContextDebiasExamples:
    """Attribute sentences per class (``attribute[i]``) and stereotype sentences."""

    attribute: list[list[Example]] = field(default_factory=list)
    stereotype: list[Example] = field(default_factory=list)

    def counts(self) -> str:
        """``"stereotype 120, attribute 0: 40, attribute 1: 35"``."""
        parts = [f"attribute {i}: {len(e)}" for i, e in enumerate(self.attribute)]
        return ", ".join([f"stereotype {len(self.stereotype)}", *parts])


def axis_attribute_words(axis: Any) -> list[list[str]]:
    """One sorted word list per group of ``axis`` (a :class:`~cdsbias.axes.BiasAxis`): its
    tuples' words, and for the registered gender axis its unpaired words too
    (``cdsbias.axes.gender.UNPAIRED_WORDS``: "hers")."""
    from cdsbias.axes import get_axis
    from cdsbias.axes.gender import UNPAIRED_WORDS

    unpaired = UNPAIRED_WORDS if axis == get_axis("gender") else ((),) * axis.k
    return [sorted(axis.words(g) | set(unpaired[g])) for g in range(axis.k)]


def default_attribute_words() -> list[list[str]]:
    """``[male words, female words]``: :func:`axis_attribute_words` of the gender axis."""
    from cdsbias.axes import get_axis

    return axis_attribute_words(get_axis("gender"))


def default_stereotype_words() -> list[str]:
    """The 60 BEC-Pro professions (English) of ``professions.tsv``, lower-cased."""
    from cdsbias.resources import load_professions

    return [str(p).strip().lower() for p in load_professions()["profession"]]


def read_word_file(path: str | Path, column: str | None = None) -> list[str]:
    """Words of a file: one per line, or the named column of a tab-separated file with a
    header; ``#`` comments and blank lines skipped, lower-cased.

    A line is one word or one phrase ("steel worker"): a line that joins several words with
    a comma or semicolon ("he,him,his") would be matched as a three-word phrase that no
    sentence contains, and the run would then blame the corpus, so it is refused here.

    Raises:
        CdsbiasError: An unreadable file, a missing column, a line holding several words,
            or no word at all.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CdsbiasError(f"Cannot read the word list {path}: {exc.strerror}.") from exc
    numbered = [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if column is not None and numbered:
        header = numbered[0][1].split("\t")
        if column not in header:
            raise CdsbiasError(f"{path} has no column '{column}' (columns: {header}).")
        index = header.index(column)
        numbered = [(n, line.split("\t")[index]) for n, line in numbered[1:]]
    words = []
    for number, line in numbered:
        word = line.strip()
        if not word:
            continue
        joined = _JOINED.search(word)
        if joined:
            parts = ", ".join(repr(w.strip()) for w in _JOINED.split(word) if w.strip())
            raise CdsbiasError(
                f"{path}, line {number}: {word!r} holds several words joined by "
                f"{_JOINER_NAMES[joined.group()]}; a word list has one word (or phrase) per "
                f"line, so put {parts} on lines of their own."
            )
        words.append(word.lower())
    if not words:
        raise CdsbiasError(f"The word list {path} holds no word.")
    return words


def _phrases(words: Iterable[str]) -> dict[str, list[tuple[str, ...]]]:
    """First word -> the phrases (word tuples) starting with it, longest first."""
    table: dict[str, list[tuple[str, ...]]] = {}
    for word in words:
        phrase = tuple(w.lower() for w in _WORD.findall(word))
        if phrase:
            table.setdefault(phrase[0], []).append(phrase)
    for phrases in table.values():
        phrases.sort(key=len, reverse=True)
    return table


def _matches(
    words: list[tuple[str, int, int]], table: dict[str, list[tuple[str, ...]]]
) -> list[tuple[tuple[str, ...], int, int]]:
    """``(phrase, start char, end char)`` of every phrase occurrence, left to right; the
    longest phrase wins and its words are not matched again ("mail clerk", not "clerk")."""
    found = []
    lowered = [w for w, _, _ in words]
    i = 0
    while i < len(lowered):
        step = 1
        for phrase in table.get(lowered[i], ()):
            if tuple(lowered[i : i + len(phrase)]) == phrase:
                found.append((phrase, words[i][1], words[i + len(phrase) - 1][2]))
                step = len(phrase)
                break
        i += step
    return found


def _locate(tokenizer: Any, text: str, start: int, end: int) -> Example | None:
    """The sentence's ids and the pieces overlapping ``text[start:end]`` (None if none)."""
    encoding = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True)
    offsets = encoding["offset_mapping"]
    positions = tuple(i for i, (s, e) in enumerate(offsets) if e > start and s < end and e > s)
    if not positions:
        return None
    return Example(tuple(encoding["input_ids"]), positions)


def build_examples(
    sentences: Iterable[str],
    tokenizer: Any,
    attribute_words: Sequence[Iterable[str]],
    stereotype_words: Iterable[str],
    *,
    max_words: int = 128,
    max_length: int | None = None,
    max_per_kind: int | None = None,
) -> ContextDebiasExamples:
    """Selects and tokenizes Context-Debias's example sentences (see the module docstring).

    Args:
        sentences: Any iterable of text lines (a corpus column, a stream).
        tokenizer: The model's fast tokenizer.
        attribute_words: One word list per attribute class (e.g. male, female).
        stereotype_words: Words or phrases whose states are debiased.
        max_words: Longest line used, in whitespace words (their ``block_size``).
        max_length: Longest tokenized line kept (special tokens included), e.g. the
            model's input limit.
        max_per_kind: Stop collecting a kind (stereotype, each attribute class) at this many.

    Returns:
        The examples. Empty kinds are allowed here; :meth:`ContextDebiasLoss.prepare`
        refuses them.
    """
    if len(attribute_words) < 1:
        raise CdsbiasError("Context-Debias needs at least one attribute word list.")
    classes = [_phrases(words) for words in attribute_words]
    stereotypes = _phrases(stereotype_words)
    out = ContextDebiasExamples(attribute=[[] for _ in classes])

    def full(kind: list[Example]) -> bool:
        return max_per_kind is not None and len(kind) >= max_per_kind

    for line in sentences:
        text = line.strip()
        if not 1 < len(text.split()) <= max_words:
            continue
        if full(out.stereotype) and all(full(kind) for kind in out.attribute):
            break
        words = [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text)]
        hits = [_matches(words, table) for table in classes]
        present = [i for i, found in enumerate(hits) if found]
        if len(present) > 1:
            continue  # words of two classes: neither an attribute nor a stereotype sentence
        if present:
            kind = out.attribute[present[0]]
            _, start, end = hits[present[0]][0]
            spans = [(start, end)] if not full(kind) else []
        else:
            kind = out.stereotype
            first: dict[tuple[str, ...], tuple[int, int]] = {}
            for phrase, start, end in _matches(words, stereotypes):
                first.setdefault(phrase, (start, end))
            spans = list(first.values()) if not full(kind) else []
        for start, end in spans:
            example = _locate(tokenizer, text, start, end)
            if example is None:
                continue
            if max_length is not None and len(example.input_ids) > max_length:
                continue
            if not full(kind):
                kind.append(example)
    return out
