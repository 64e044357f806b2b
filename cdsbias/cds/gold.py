"""Scoring a language's CDS rules on a hand-written gold set.

A gold file (``tests/assets/cds/gold_<code>.tsv``) has a header and three tab-separated
columns: ``phenomenon`` (what the row tests; ``unchanged`` for rows where nothing may
change), ``source`` and ``expected`` (the correct counterfactual, written by hand).

Two measures per phenomenon:

* **sentence exact match**: the rules' output equals ``expected``;
* **changed-word accuracy**: over the words that should change or that the rules changed
  (a word of ``source`` that differs from ``expected`` or from the output, compared
  position by position), the share the output gets right.

For rewriting that changes the number of words (gender-neutral English: *she's* ->
*they've*, *policeman* -> *police officer*), ``rewrite_figures`` gives the **word error
rate** (WER: the word-level Levenshtein distance between output and expected, summed over
the sentences and divided by the expected sentences' words, as in speech recognition;
words and punctuation marks count as tokens, *they've* is three), on the sentences with
gendered words, and how many ``unchanged`` sentences the rules changed at all.

A first name counts as right when the output uses *any* name of the other gender (the
gold set cannot know which partner the name list picks): ``expected`` names one such name,
and an output name of the same gender as that one is accepted, genitive ``-s`` included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cdsbias.cds.languages.base import Language
from cdsbias.cds.wordlists import data_lines, resource_path
from cdsbias.errors import CdsbiasError

GOLD_COLUMNS = ("phenomenon", "source", "expected")
#: The phenomenon of rows where the output must equal the source.
UNCHANGED = "unchanged"
_PIECES = re.compile(r"([^\W\d_]+)")


@dataclass(frozen=True)
class GoldRow:
    """One hand-written gold sentence."""

    phenomenon: str
    source: str
    expected: str


@dataclass
class GoldScore:
    """Counts for one phenomenon (or all rows).

    Attributes:
        sentences: Rows scored.
        exact: Rows whose output equals the expected sentence (names by gender).
        words: Words that should change or that the rules changed.
        words_correct: Of those, the words the output has right.
    """

    sentences: int = 0
    exact: int = 0
    words: int = 0
    words_correct: int = 0

    @property
    def exact_rate(self) -> float:
        """Sentence exact-match rate."""
        return self.exact / self.sentences if self.sentences else 0.0

    @property
    def word_accuracy(self) -> float:
        """Changed-word accuracy (1.0 when no word should or did change)."""
        return self.words_correct / self.words if self.words else 1.0


def read_gold(path: Path) -> list[GoldRow]:
    """Reads a gold file.

    Raises:
        CdsbiasError: ``file:line: problem`` for a wrong header or a row without three
            fields, or an ``unchanged`` row whose expected differs from its source.
    """
    path = Path(path)
    lines = data_lines(path)
    if not lines or tuple(lines[0][1].split("\t")) != GOLD_COLUMNS:
        raise CdsbiasError(f"{path}:1: expected the header {' <TAB> '.join(GOLD_COLUMNS)}")
    rows = []
    for line_number, line in lines[1:]:
        fields = line.split("\t")
        if len(fields) != 3:
            raise CdsbiasError(f"{path}:{line_number}: expected 3 fields, got {len(fields)}")
        row = GoldRow(*fields)
        if row.phenomenon == UNCHANGED and row.source != row.expected:
            raise CdsbiasError(f"{path}:{line_number}: an unchanged row must expect its source")
        rows.append(row)
    return rows


def name_genders(code: str) -> dict[str, str]:
    """Each first name of language ``code``'s name list -> ``"m"`` or ``"f"``."""
    path = resource_path("name_pairs.tsv" if code == "en" else f"{code}/name_pairs.tsv")
    genders = {}
    for _, line in data_lines(path):
        male, female = (name.strip().capitalize() for name in line.split("\t")[:2])
        genders[male], genders[female] = "m", "f"
    return genders


def _genitive_name(word: str, genders: dict[str, str]) -> bool:
    return word not in genders and word.endswith("s") and word[:-1] in genders


def _gender(word: str, genders: dict[str, str]) -> str | None:
    if word in genders:
        return genders[word]
    return genders.get(word[:-1]) if _genitive_name(word, genders) else None


def _same(output: str, expected: str, is_word: bool, genders: dict[str, str]) -> bool:
    if output == expected:
        return True
    if not is_word:
        return False
    gender = _gender(expected, genders)
    return (
        gender is not None
        and _gender(output, genders) == gender
        and _genitive_name(output, genders) == _genitive_name(expected, genders)
    )


def score_row(row: GoldRow, output: str, genders: dict[str, str]) -> tuple[bool, int, int]:
    """Scores one output: (exact match, words to judge, words right)."""
    source, expected, produced = (_PIECES.split(t) for t in (row.source, row.expected, output))
    if len(produced) != len(expected) or len(source) != len(expected):
        # Pieces do not line up (a word became two, or vanished): nothing is right.
        wrong = sum(
            1 for i in range(1, min(len(source), len(expected)), 2) if source[i] != expected[i]
        )
        return False, max(wrong, 1), 0
    exact = all(
        _same(p, e, i % 2 == 1, genders)
        for i, (p, e) in enumerate(zip(produced, expected, strict=True))
    )
    judged = correct = 0
    for i in range(1, len(source), 2):
        if source[i] != expected[i] or source[i] != produced[i]:
            judged += 1
            correct += _same(produced[i], expected[i], True, genders)
    return exact, judged, correct


def score_gold(language: Language, rows: list[GoldRow]) -> dict[str, GoldScore]:
    """Scores ``language`` on gold ``rows``: one :class:`GoldScore` per phenomenon and
    ``"all"``."""
    genders = name_genders(language.code)
    scores: dict[str, GoldScore] = {}
    total = GoldScore()
    for row in rows:
        result = score_row(row, language.substitute(row.source), genders)
        tally(scores, total, row.phenomenon, result)
    scores["all"] = total
    return scores


def tally(
    scores: dict[str, GoldScore], total: GoldScore, phenomenon: str, result: tuple[int, int, int]
) -> None:
    """Adds one row's ``score_row`` result to its phenomenon's counts and to ``total``."""
    exact, judged, correct = result
    for score in (scores.setdefault(phenomenon, GoldScore()), total):
        score.sentences += 1
        score.exact += exact
        score.words += judged
        score.words_correct += correct


def format_scores(scores: dict[str, GoldScore]) -> str:
    """A markdown table: phenomenon, sentences, exact match, changed-word accuracy."""
    lines = [
        "| phenomenon | sentences | sentence exact match | changed-word accuracy |",
        "|---|---:|---:|---:|",
    ]
    for name, score in sorted(scores.items(), key=lambda item: (item[0] == "all", item[0])):
        lines.append(
            f"| {'**all**' if name == 'all' else name} | {score.sentences} | "
            f"{score.exact}/{score.sentences} ({score.exact_rate:.1%}) | "
            f"{score.words_correct}/{score.words} ({score.word_accuracy:.1%}) |"
        )
    return "\n".join(lines)


_TOKENS = re.compile(r"[^\W_]+|[^\w\s]")


def word_errors(output: str, expected: str) -> int:
    """The word-level Levenshtein distance (substitutions, insertions, deletions) between
    ``output`` and ``expected``, tokens as in ``rewrite_figures``."""
    produced, wanted = _TOKENS.findall(output), _TOKENS.findall(expected)
    previous = list(range(len(wanted) + 1))
    for i, token in enumerate(produced, 1):
        current = [i]
        for j, target in enumerate(wanted, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (token != target))
            )
        previous = current
    return previous[-1]


def rewrite_figures(language: Language, rows: list[GoldRow]) -> dict[str, float]:
    """Exact-sentence rate and WER on the rows with gendered words, and the number of
    ``unchanged`` rows the rules changed (module docstring).

    Returns:
        ``sentences``, ``exact``, ``exact_rate``, ``errors``, ``words``, ``wer`` (over the
        rows with gendered words), ``unchanged`` and ``unchanged_changed``.
    """
    figures = dict.fromkeys(
        ("sentences", "exact", "errors", "words", "unchanged", "unchanged_changed"), 0
    )
    for row in rows:
        output = language.substitute(row.source)
        if row.phenomenon == UNCHANGED:
            figures["unchanged"] += 1
            figures["unchanged_changed"] += output != row.source
            continue
        figures["sentences"] += 1
        figures["exact"] += output == row.expected
        figures["errors"] += word_errors(output, row.expected)
        figures["words"] += len(_TOKENS.findall(row.expected))
    result: dict[str, float] = dict(figures)
    result["exact_rate"] = figures["exact"] / figures["sentences"] if figures["sentences"] else 1.0
    result["wer"] = figures["errors"] / figures["words"] if figures["words"] else 0.0
    return result
