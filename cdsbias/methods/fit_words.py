"""The words that choose a post-hoc fit's sentences, and what the fit's classes are called.

:func:`axis_fit_words` gives the word tuples of the run's bias axis (``bias_axis``,
cdsbias.axes): for gender the axis's pairs (the project's CDS pairs plus bias-bench's
``him/her``, ``his/her``) or a gender word-pair file (``posthoc_word_pairs``:
:func:`load_fit_pairs`, a bias-bench style JSON ``{"gender": [[male, female], ...]}`` or a
CDS-format TSV); for any other axis its own tuples. :func:`group_labels` and
:func:`binary_inlp` say which classes the fit reads (bias-bench's rules), and the errors
say what a corpus lacks. The selection itself: :mod:`cdsbias.methods.fit_sentences` and
:mod:`cdsbias.methods.attribute_sentences`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cdsbias.axes import DEFAULT_AXIS, BiasAxis, get_axis
from cdsbias.data.sentences import split_sentences
from cdsbias.errors import CdsbiasError

#: bias-bench's sentences per class for INLP.
INLP_SENTENCES_PER_CLASS = 10_000
#: Fewer sentences than this in any INLP class is an error: the classifiers' dev accuracy
#: (about 21% of the sentences) would be noise.
INLP_MIN_SENTENCES_PER_CLASS = 100
#: The neutral class of the group sentences (no word of the axis).
NEUTRAL = "neutral"
#: What the record names the default gender pairs (the hash says which they are).
GENDER_PAIRS_SOURCE = "cdsbias CDS word pairs + bias-bench's him/her, his/her"


def group_labels(groups: tuple[str, ...]) -> dict[str, int]:
    """Class labels of the group sentences: the first group ``k − 1``, counting down to 0
    for the last, the neutral class −1 — bias-bench's ``_split_gender_dataset`` labels
    (male 1, female 0, neutral −1) for gender."""
    k = len(groups)
    return {**{group: k - 1 - i for i, group in enumerate(groups)}, NEUTRAL: -1}


def default_groups() -> tuple[str, ...]:
    """The default axis's (gender's) group names."""
    return get_axis(DEFAULT_AXIS).groups


#: Class labels of INLP's features on the gender axis, as bias-bench's
#: ``_split_gender_dataset``.
INLP_LABELS = group_labels(default_groups())


@dataclass(frozen=True)
class WordPairs:
    """The word tuples that select fit sentences, lower case, and where they came from:
    ``(male, female)`` pairs for gender, one word per group for a k-group axis.

    Attributes:
        pairs: The tuples, one word per group, in group order.
        source: Where they came from (a file, or the axis's source).
        groups: The axis's group names (default: the gender axis's).
        axis: The axis's name.
    """

    pairs: tuple[tuple[str, ...], ...]
    source: str
    groups: tuple[str, ...] = field(default_factory=default_groups)
    axis: str = DEFAULT_AXIS

    def words(self, group: int) -> frozenset[str]:
        """Every word of ``group``."""
        return frozenset(words[group] for words in self.pairs)

    @property
    def male(self) -> frozenset[str]:
        """The first group's words (gender: male)."""
        return self.words(0)

    @property
    def female(self) -> frozenset[str]:
        """The second group's words (gender: female)."""
        return self.words(1)

    @property
    def hash(self) -> str:
        """First 12 hex digits of the SHA-256 of the sorted pairs (the run folder's record)."""
        text = json.dumps(sorted(self.pairs), separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _json_pairs(path: Path, bias_type: str) -> list[tuple[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CdsbiasError(f"Word-pair file {path} not found.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CdsbiasError(f"{path}: not valid JSON ({exc}).") from None
    entries = data.get(bias_type) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise CdsbiasError(
            f'{path}: expected a bias-bench word list {{"{bias_type}": [[male, female], ...]}}.'
        )
    pairs = []
    for number, entry in enumerate(entries, 1):
        if not (isinstance(entry, list) and len(entry) == 2 and all(
            isinstance(w, str) and w.strip() and " " not in w.strip() for w in entry
        )):  # fmt: skip
            raise CdsbiasError(
                f"{path}: {bias_type} entry {number} is {entry!r}, not a [male, female] "
                "pair of single words."
            )
        pairs.append((entry[0].strip().lower(), entry[1].strip().lower()))
    return pairs


def load_fit_pairs(path: str | Path | None = None, *, bias_type: str = "gender") -> WordPairs:
    """The gender word pairs that select fit sentences.

    Args:
        path: None for the gender axis's pairs (cdsbias.axes.gender: the CDS pairs plus
            bias-bench's ``him/her``, ``his/her``); a ``.json`` file in bias-bench's format
            (``bias_attribute_words.json``); any other file in the CDS
            ``male<TAB>female[<TAB>direction]`` format.
        bias_type: The JSON key to read.

    Raises:
        CdsbiasError: A missing or malformed file, or one with no pairs.
    """
    from cdsbias.axes.gender import word_pair_tuples

    if path is None:
        pairs = list(get_axis(DEFAULT_AXIS).tuples)
        source = GENDER_PAIRS_SOURCE
    else:
        path = Path(path)
        pairs = _json_pairs(path, bias_type) if path.suffix == ".json" else word_pair_tuples(path)
        source = str(path)
    pairs = list(dict.fromkeys(pairs))
    if not pairs:
        raise CdsbiasError(f"{source}: no word pairs found.")
    return WordPairs(tuple(pairs), source)


def axis_fit_words(axis: BiasAxis, path: str | Path | None = None) -> WordPairs:
    """The word tuples of ``axis`` that select fit sentences.

    The registered gender axis gives :func:`load_fit_pairs` ``(path)`` (its pairs, or a
    gender word-pair file's); any other axis gives its own tuples, and takes no file
    (its words are the axis: ``bias_axis: FILE.tsv`` for words of one's own).

    Raises:
        CdsbiasError: A word-pair file given for an axis other than gender.
    """
    if axis == get_axis(DEFAULT_AXIS):
        return load_fit_pairs(path)
    if path is not None:
        raise CdsbiasError(
            f"posthoc_word_pairs ({path}) holds gender word pairs, but the run's bias_axis is "
            f"'{axis.name}' ({', '.join(axis.groups)}); remove posthoc_word_pairs (the fit "
            "reads the axis's word tuples), or give your own words as the axis: bias_axis: "
            "FILE.tsv (one column per group)."
        )
    if NEUTRAL in axis.groups:
        raise CdsbiasError(
            f"{axis.source or axis.name}: a group is named '{NEUTRAL}', the name of the fit's "
            "class of sentences with no axis word; rename that group."
        )
    # A variant's fit follows its base axis's rules (gender@bias-bench: gender's INLP classes).
    return WordPairs(tuple(axis.tuples), axis.source or axis.name, axis.groups, axis.base_name)


def binary_inlp(pairs: WordPairs) -> bool:
    """Whether INLP fits two classes (an attribute sentence vs a neutral one) rather than one
    per group: bias-bench's rule, one class per side for ``gender`` only
    (``compute_projection_matrix``: ``if bias_type == "gender"``), is kept, so every axis
    but gender, a user's included, gets bias-bench's race/religion procedure
    (:mod:`cdsbias.methods.attribute_sentences`)."""
    return pairs.axis != DEFAULT_AXIS or len(pairs.groups) != 2


def corpus_sentences(documents: Iterable[str]) -> Iterator[str]:
    """The sentences of ``documents`` (the project's splitter), lazily; non-text is an error."""
    for document in documents:
        if not isinstance(document, str):
            raise CdsbiasError(
                f"Fit documents must be text, got {type(document).__name__}; pass the "
                "corpus's text column."
            )
        yield from split_sentences(document)


def no_words_error(pairs: WordPairs) -> CdsbiasError:
    kind = "word pairs" if len(pairs.groups) == 2 else "word tuples"
    return CdsbiasError(
        f"None of the {len(pairs.pairs)} {kind} ({pairs.source}, hash {pairs.hash}) "
        f"occurs as a space-separated word in the corpus's sentences; use a corpus with "
        f"text naming the {pairs.axis} axis's groups ({', '.join(pairs.groups)}) or another "
        f"{'word-pair file' if pairs.axis == DEFAULT_AXIS else 'bias_axis'}."
    )


def too_few_error(
    counts: dict[str, int], per_class: int, min_per_class: int, missing: str = ""
) -> CdsbiasError:
    """The error of a class with fewer than ``min_per_class`` sentences: each class's count,
    the keys that set them and the fixes (``missing``: a note on groups the corpus never
    names)."""
    found = ", ".join(f"{count} {name}" for name, count in counts.items())
    fewest = min(counts.values())
    lower = (
        f", or lower posthoc_min_sentences_per_class (e.g. "
        f"posthoc_min_sentences_per_class={fewest}) to fit on what it has"
        if fewest > 0
        else ""
    )
    return CdsbiasError(
        f"INLP found too few fit sentences: {found} (posthoc_min_sentences_per_class="
        f"{min_per_class} per class needed, posthoc_sentences_per_class={per_class} "
        f"wanted){missing}; use a larger corpus{lower}."
    )


def missing_groups(pairs: WordPairs, counts: dict[str, int]) -> str:
    """``; no sentence names asian (words such as asian, asians, ...)`` for groups with none."""
    notes = []
    for index, group in enumerate(pairs.groups):
        if counts.get(group, 1) == 0:
            examples = ", ".join(sorted(pairs.words(index))[:4])
            notes.append(f"no sentence names {group} alone (words such as {examples})")
    return "".join(f"; {note}" for note in notes)
