"""Choosing the sentences a post-hoc erasure is fitted on, as bias-bench chooses them.

Meade et al. (2022, bias-bench) fit SentenceDebias and INLP on sentences of a Wikipedia
dump (``wikipedia-2.5.txt``). Here the sentences come from any corpus — an iterable of
document texts, so a streamed corpus works and is read only as far as needed — and the
selection follows bias-bench's code:

* **INLP** (``bias_bench/dataset/inlp.py``, ``_load_gender_data``):
  :func:`select_inlp_sentences` — three classes, male, female and neutral, up to 10,000
  each, with bias-bench's random clipping.
* **SentenceDebias** (``bias_bench/dataset/sentence_debias.py``, ``_gender_augment_func``):
  :func:`select_counterfactual_pairs` — each sentence with a word of a pair, and the same
  sentence with that word swapped for its counterpart.

Word pairs (:func:`load_fit_pairs`) default to the project's CDS pairs
(``cdsbias/resources/wordlists/gendered_word_pairs.tsv``) plus bias-bench's two pronoun
pairs ``him/her`` and ``his/her``, which the CDS list leaves to its context rules; a
bias-bench style JSON ``{"gender": [[male, female], ...]}`` or a CDS-format TSV is accepted.

Quirks of bias-bench kept on purpose, so the same corpus gives the same sentences:
sentences are lower-cased and split into words at single spaces only, so a word with
punctuation attached ("he.", "mother,") does not count as gendered (and such a sentence can
land in the neutral class); ``idx`` is the *first* occurrence of the last gendered word
met; neutral sentences are not de-duplicated. One departure: bias-bench shuffles the whole
file first; here documents are read in the order given (a streamed corpus shuffles with its
buffer), because a stream cannot be shuffled as a whole.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cdsbias.cds.wordlists import load_word_pairs
from cdsbias.data.sentences import split_sentences
from cdsbias.errors import CdsbiasError

#: bias-bench's sentences per class for INLP.
INLP_SENTENCES_PER_CLASS = 10_000
#: Fewer sentences than this in any INLP class is an error: the classifiers' dev accuracy
#: (about 21% of the sentences) would be noise.
INLP_MIN_SENTENCES_PER_CLASS = 100
#: bias-bench's pronoun pairs that the CDS list leaves to its context rules.
PRONOUN_PAIRS = (("him", "her"), ("his", "her"))
#: Class labels of INLP's features, as bias-bench's ``_split_gender_dataset``.
INLP_LABELS = {"male": 1, "female": 0, "neutral": -1}


@dataclass(frozen=True)
class WordPairs:
    """Gendered word pairs ``(male, female)``, lower case, and where they came from."""

    pairs: tuple[tuple[str, str], ...]
    source: str

    @property
    def male(self) -> frozenset[str]:
        return frozenset(m for m, _ in self.pairs)

    @property
    def female(self) -> frozenset[str]:
        return frozenset(f for _, f in self.pairs)

    @property
    def hash(self) -> str:
        """First 12 hex digits of the SHA-256 of the sorted pairs (the run folder's record)."""
        text = json.dumps(sorted(self.pairs), separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _cds_pairs(path: Path | None) -> list[tuple[str, str]]:
    """``(male, female)`` of every line of a CDS word-pair file, whatever its direction."""
    word_map, male_words, _ = load_word_pairs(path)
    pairs = {(m, f) for m, f in word_map.items() if m in male_words and f not in male_words}
    pairs |= {(m, f) for f, m in word_map.items() if f not in male_words and m in male_words}
    return sorted(pairs)


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
    """The word pairs that select fit sentences.

    Args:
        path: None for the CDS pairs plus :data:`PRONOUN_PAIRS`; a ``.json`` file in
            bias-bench's format (``bias_attribute_words.json``); any other file in the CDS
            ``male<TAB>female[<TAB>direction]`` format.
        bias_type: The JSON key to read.

    Raises:
        CdsbiasError: A missing or malformed file, or one with no pairs.
    """
    if path is None:
        pairs = [*_cds_pairs(None), *PRONOUN_PAIRS]
        source = "cdsbias CDS word pairs + bias-bench's him/her, his/her"
    else:
        path = Path(path)
        pairs = _json_pairs(path, bias_type) if path.suffix == ".json" else _cds_pairs(path)
        source = str(path)
    pairs = list(dict.fromkeys(pairs))
    if not pairs:
        raise CdsbiasError(f"{source}: no word pairs found.")
    return WordPairs(tuple(pairs), source)


def _sentences(documents: Iterable[str]) -> Iterator[str]:
    for document in documents:
        if not isinstance(document, str):
            raise CdsbiasError(
                f"Fit documents must be text, got {type(document).__name__}; pass the "
                "corpus's text column."
            )
        yield from split_sentences(document)


def _no_pair_error(pairs: WordPairs) -> CdsbiasError:
    return CdsbiasError(
        f"None of the {len(pairs.pairs)} word pairs ({pairs.source}, hash {pairs.hash}) "
        "occurs as a space-separated word in the corpus's sentences; use a corpus with "
        "gendered text or another word-pair file."
    )


# -------------------------------------------------------------------------------- INLP
@dataclass
class InlpSentences:
    """INLP's fit sentences: clipped, lower-cased, per class."""

    male: list[str] = field(default_factory=list)
    female: list[str] = field(default_factory=list)
    neutral: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in INLP_LABELS}

    def labelled(self) -> tuple[list[str], list[int]]:
        """All sentences, male then female then neutral, and their :data:`INLP_LABELS`."""
        sentences: list[str] = []
        labels: list[int] = []
        for name, label in INLP_LABELS.items():
            sentences += getattr(self, name)
            labels += [label] * len(getattr(self, name))
        return sentences, labels


def select_inlp_sentences(
    documents: Iterable[str],
    pairs: WordPairs,
    *,
    per_class: int = INLP_SENTENCES_PER_CLASS,
    min_per_class: int = INLP_MIN_SENTENCES_PER_CLASS,
    seed: int = 0,
) -> InlpSentences:
    """Male, female and neutral sentences for INLP, as bias-bench's ``_load_gender_data``.

    Each sentence is lower-cased and split at spaces; sentences of fewer than 5 words are
    skipped; a sentence with words of both sides is skipped. A sentence with no gendered
    word is *neutral* and clipped to its first ``randint(4, n)`` words; a sentence with
    words of one side is *male* or *female* (each distinct sentence once) and clipped to
    its first ``randint(idx, n) + 1`` words, ``idx`` the position of its gendered word, so
    the clip always keeps it. Each class stops at ``per_class``; reading stops when all
    three are full. ``random.Random(seed)`` draws the clips in bias-bench's order.

    Args:
        documents: Document texts, read lazily.
        pairs: The gendered word pairs.
        per_class: Sentences per class (bias-bench: 10,000).
        min_per_class: Fewest sentences any class may end with.
        seed: Seed of the clipping (bias-bench's ``--seed``, default 0).

    Raises:
        CdsbiasError: No gendered sentence at all, or a class with fewer than
            ``min_per_class`` sentences (the message gives each class's count).
    """
    rng = random.Random(seed)
    male_words, female_words = pairs.male, pairs.female
    chosen = InlpSentences()
    seen: dict[str, set[str]] = {"male": set(), "female": set()}
    for sentence in _sentences(documents):
        tokens = [token.lower() for token in sentence.split(" ")]
        if len(tokens) < 5:
            continue
        is_male = is_female = False
        idx = -1
        for token in tokens:
            if token in male_words:
                is_male, idx = True, tokens.index(token)
            if token in female_words:
                is_female, idx = True, tokens.index(token)
            if is_male and is_female:
                break
        if not is_male and not is_female:
            if len(chosen.neutral) < per_class:
                chosen.neutral.append(" ".join(tokens[: rng.randint(4, len(tokens))]))
        elif not (is_male and is_female):
            side = "male" if is_male else "female"
            target = getattr(chosen, side)
            if len(target) < per_class and sentence not in seen[side]:
                seen[side].add(sentence)
                target.append(" ".join(tokens[: rng.randint(idx, len(tokens)) + 1]))
        if min(chosen.counts().values()) >= per_class:
            break
    counts = chosen.counts()
    if counts["male"] + counts["female"] == 0:
        raise _no_pair_error(pairs)
    short = [name for name, count in counts.items() if count < min_per_class]
    if short:
        found = ", ".join(f"{count} {name}" for name, count in counts.items())
        fewest = min(counts.values())
        lower = (
            f", or lower posthoc_min_sentences_per_class (e.g. "
            f"posthoc_min_sentences_per_class={fewest}) to fit on what it has"
            if fewest > 0
            else ""
        )
        raise CdsbiasError(
            f"INLP found too few fit sentences: {found} (posthoc_min_sentences_per_class="
            f"{min_per_class} per class needed, posthoc_sentences_per_class={per_class} "
            f"wanted); use a larger corpus{lower}."
        )
    return chosen


# ----------------------------------------------------------------------- SentenceDebias
@dataclass
class CounterfactualPairs:
    """SentenceDebias's fit sentences: row ``i`` of ``male`` and ``female`` is one pair."""

    male: list[str] = field(default_factory=list)
    female: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.male)


def _swap(words: list[str], old: str, new: str) -> str:
    return " ".join(new if word == old else word for word in words)


def select_counterfactual_pairs(
    documents: Iterable[str], pairs: WordPairs, *, max_pairs: int | None = None
) -> CounterfactualPairs:
    """Counterfactual sentence pairs for SentenceDebias, as bias-bench's augmentation.

    Each sentence is lower-cased, stripped and split at spaces; for every word pair
    ``(m, f)``, in the list's order: if ``m`` is one of its words, the pair is (the
    sentence, the sentence with every ``m`` replaced by ``f``); if ``f`` is, (the sentence
    with every ``f`` replaced by ``m``, the sentence). A sentence with several gendered
    words gives several pairs, each swapping one word. (bias-bench unpacks its ``[male,
    female]`` entries as ``(female_word, male_word)``, so its "male_example" holds the
    female sentence; the principal components do not depend on the order, and here the
    sides are named as they are.)

    Args:
        documents: Document texts, read lazily.
        pairs: The gendered word pairs.
        max_pairs: Stop after this many pairs (bias-bench reads the whole file).

    Raises:
        CdsbiasError: If no sentence holds a word of any pair.
    """
    chosen = CounterfactualPairs()
    for sentence in _sentences(documents):
        text = sentence.lower().strip()
        words = text.split(" ")
        present = set(words)
        for male, female in pairs.pairs:
            if male in present:
                chosen.male.append(text)
                chosen.female.append(_swap(words, male, female))
            if female in present:
                chosen.male.append(_swap(words, female, male))
                chosen.female.append(text)
        if max_pairs is not None and len(chosen) >= max_pairs:
            del chosen.male[max_pairs:], chosen.female[max_pairs:]
            break
    if not chosen.male:
        raise _no_pair_error(pairs)
    return chosen
