"""What a bias axis is: named groups, the word tuples that name them, and what measures it.

An axis (gender, race, religion, or one a user defines in a file) is data that CDS, the
debiasing methods and the benchmarks all read, so it lives below all three. A *word tuple*
holds one word per group, in the axis's group order (bias-bench's ``bias_attribute_words.json``
shape: ``["jewish", "christian", "muslim"]``); the word of group ``j`` in the tuple of a
word of group ``i`` is that word's counterpart for group ``j``.

Rules every axis obeys (checked when it is built, so a bad file fails before anything is
written):

* every tuple has exactly one word per group, words are single tokens of letters (with
  inner hyphens or apostrophes) and are stored lower-case;
* a word belongs to one group only: a word listed under two groups is an error;
* a word may be listed in several tuples of its own group (bias-bench lists "asian" in
  three): the *first* tuple it appears in gives its counterparts. bias-bench's own loop lets
  the last match win; the first is kept here because the shipped tuples are ordered from the
  most common use to the least, and a file's author reads top-down.

An axis says whose word lists its tuples are (:attr:`BiasAxis.word_lists`): cdsbias's own
revised lists, a user's file, or another project's lists shipped as a *variant* of a
registered axis (``race@bias-bench``: bias-bench's tuples, everything else the base axis's),
so that a run folder and a results table can say which lists a number was made with.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property

from cdsbias.errors import CdsbiasError

#: A word of a tuple: letters, with inner hyphens or apostrophes ("african-american"), and
#: an abbreviation's final full stop as bias-bench lists "mr." (its words match whitespace
#: tokens, so "mr." is a word there).
AXIS_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*\.?")
#: Values of :attr:`BiasAxis.word_lists`: cdsbias's shipped lists, a user's attribute
#: file, bias-bench's ``data/bias_attribute_words.json`` as published.
WORD_LISTS = ("cdsbias", "file", "bias-bench")
#: The word classes a shipped or user TSV may give a tuple in its ``form`` column; CDS uses
#: them for agreement (cdsbias.cds.axis_substitution). None: not given.
TUPLE_FORMS = ("adjective", "noun", "plural", "other")


@dataclass(frozen=True)
class BiasAxis:
    """One bias axis.

    Attributes:
        name: The registry name (``race``) or, for a user file, the file's key or stem.
        groups: The group names, in tuple order (``("jewish", "christian", "muslim")``).
        tuples: Word tuples, lower case, one word per group.
        forms: Per tuple, its word class (:data:`TUPLE_FORMS`) or None where not given.
        source: Where the tuples come from (a file path, or "shipped: ...").
        description: One line on what the axis covers.
        self_debias_prefix: Self-Debias's debiasing prefix for this axis (bias-bench's
            ``DEBIASING_PREFIXES``); None when the axis has none.
        seat_tests: SEAT tests that measure this axis (bias-bench's ``export/seat.py``).
        crows_pairs_category: CrowS-Pairs ``bias_type`` of this axis, or None.
        stereoset_domain: StereoSet ``bias_type`` of this axis, or None.
        languages: CDS languages that have this axis (None: any; a user's axis is written in
            the user's language).
        citations: Sources of the word lists and settings.
        cds_refused: Why CDS/CDA does not apply to this axis (swapping its words does not
            give the same sentence about another group), or None where it does. The tuples
            still choose the post-hoc methods' fit sentences.
        people_only: Words CDS substitutes only where they describe people (before a person
            noun, or as a plural people noun), as the colour words of race are: age's
            "old" in "an old house" or "ten years old" stays.
        holistic_bias_axis: The HolisticBias (Smith et al. 2022) axis this one maps to
            (``descriptors.json`` key, e.g. ``ability``), or None.
        holistic_bias_buckets: Per group, the HolisticBias buckets of that axis whose
            descriptors name the group (``(("child", "young"), ("old",))``); read with
            :func:`cdsbias.axes.holistic_bias.axis_descriptors`.
        word_lists: Whose word lists the tuples are (:data:`WORD_LISTS`): ``cdsbias``
            (the shipped, revised lists), ``file`` (a user's attribute file) or
            ``bias-bench`` (Meade et al.'s own lists, the ``NAME@bias-bench`` variants). Run
            folders record it, so results say which lists each number was made with.
        variant_of: For a variant, the registered axis whose groups, prefix, SEAT tests,
            benchmark categories and language it shares (``race`` for
            ``race@bias-bench``); None for an axis of its own.
    """

    name: str
    groups: tuple[str, ...]
    tuples: tuple[tuple[str, ...], ...]
    forms: tuple[str | None, ...] = ()
    source: str = ""
    description: str = ""
    self_debias_prefix: str | None = None
    seat_tests: tuple[str, ...] = ()
    crows_pairs_category: str | None = None
    stereoset_domain: str | None = None
    languages: tuple[str, ...] | None = None
    citations: tuple[str, ...] = field(default=(), compare=False)
    cds_refused: str | None = None
    people_only: frozenset[str] = frozenset()
    holistic_bias_axis: str | None = None
    holistic_bias_buckets: tuple[tuple[str, ...], ...] = ()
    word_lists: str = "cdsbias"
    variant_of: str | None = None

    def __post_init__(self) -> None:
        where = self.source or f"axis '{self.name}'"
        if self.word_lists not in WORD_LISTS:
            raise CdsbiasError(
                f"{where}: word_lists '{self.word_lists}' is not one of {', '.join(WORD_LISTS)}"
            )
        if len(self.groups) < 2:
            raise CdsbiasError(f"{where}: an axis needs at least two groups, got {self.groups}")
        if len(set(self.groups)) != len(self.groups):
            raise CdsbiasError(f"{where}: group names repeat: {', '.join(self.groups)}")
        if not self.tuples:
            raise CdsbiasError(f"{where}: no word tuples")
        if self.forms and len(self.forms) != len(self.tuples):
            raise CdsbiasError(f"{where}: {len(self.forms)} forms for {len(self.tuples)} tuples")
        for form in self.forms:
            if form is not None and form not in TUPLE_FORMS:
                raise CdsbiasError(f"{where}: form '{form}' is not one of {', '.join(TUPLE_FORMS)}")
        group_of: dict[str, int] = {}
        for number, words in enumerate(self.tuples, 1):
            if len(words) != len(self.groups):
                raise CdsbiasError(
                    f"{where}: tuple {number} {list(words)} has {len(words)} word(s); the "
                    f"axis has {len(self.groups)} groups ({', '.join(self.groups)})"
                )
            for group, word in enumerate(words):
                if word != word.lower() or not AXIS_WORD.fullmatch(word):
                    raise CdsbiasError(
                        f"{where}: tuple {number}: {word!r} is not one lower-case word"
                    )
                known = group_of.setdefault(word, group)
                if known != group:
                    raise CdsbiasError(
                        f"{where}: tuple {number}: '{word}' is listed for group "
                        f"'{self.groups[group]}' and for group '{self.groups[known]}'; a word "
                        "can name one group only"
                    )
        unknown = sorted(self.people_only - set(group_of))
        if unknown:
            raise CdsbiasError(f"{where}: people-only word(s) {', '.join(unknown)} in no tuple")
        if self.holistic_bias_buckets and len(self.holistic_bias_buckets) != len(self.groups):
            raise CdsbiasError(
                f"{where}: {len(self.holistic_bias_buckets)} HolisticBias bucket lists for "
                f"{len(self.groups)} groups"
            )

    @property
    def base_name(self) -> str:
        """The registered axis this one measures: :attr:`variant_of`, else :attr:`name`
        (what a language declares and what gender's own rules key on)."""
        return self.variant_of or self.name

    @property
    def k(self) -> int:
        """The number of groups."""
        return len(self.groups)

    @cached_property
    def _first_tuple(self) -> dict[str, tuple[int, int]]:
        """word -> (its group, the index of the first tuple it appears in)."""
        first: dict[str, tuple[int, int]] = {}
        for index, words in enumerate(self.tuples):
            for group, word in enumerate(words):
                first.setdefault(word, (group, index))
        return first

    def group_of(self, word: str) -> int | None:
        """The group index of ``word`` (any case), or None when it is no axis word."""
        found = self._first_tuple.get(word.lower())
        return None if found is None else found[0]

    def counterpart(self, word: str, group: int) -> str:
        """``word``'s counterpart in ``group`` (lower case), from the first tuple listing it.

        Raises:
            KeyError: ``word`` is not an axis word.
        """
        _, index = self._first_tuple[word.lower()]
        return self.tuples[index][group]

    def tuple_of(self, word: str) -> int | None:
        """The index of the first tuple listing ``word``, or None."""
        found = self._first_tuple.get(word.lower())
        return None if found is None else found[1]

    def words(self, group: int) -> frozenset[str]:
        """Every word of ``group``."""
        return frozenset(words[group] for words in self.tuples)

    @cached_property
    def all_words(self) -> frozenset[str]:
        """Every word of every group."""
        return frozenset(self._first_tuple)

    @property
    def hash(self) -> str:
        """First 12 hex digits of the SHA-256 of the groups and tuples (run records)."""
        text = json.dumps([list(self.groups), [list(t) for t in self.tuples]])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    def check_language(self, code: str, language_axes: tuple[str, ...]) -> None:
        """Raises a one-line error when language ``code`` lacks this axis.

        Args:
            code: The CDS language code.
            language_axes: The axes that language declares (``Language.axes``).
        """
        if self.languages is None:
            return
        if self.base_name not in language_axes or code not in self.languages:
            raise CdsbiasError(
                f"The CDS language '{code}' has no '{self.name}' axis; it has "
                f"{', '.join(language_axes)}. Use one of those, a language with "
                f"'{self.name}' ({', '.join(self.languages)}), or an attribute file of your "
                "own words (bias_axis: FILE.tsv)"
            )

    def check_counterfactuals(self, alternatives: str = "") -> None:
        """Raises a one-line error when CDS/CDA does not apply to this axis.

        Args:
            alternatives: What does apply, in words (the caller knows the methods; this
                module sits below them), e.g. "SentenceDebias, INLP, LEACE".
        """
        if self.cds_refused is None:
            return
        instead = f" Debias it with {alternatives} instead" if alternatives else ""
        raise CdsbiasError(
            f"bias axis '{self.name}' has no counterfactuals, so CDS/CDA does not apply to "
            f"it: {self.cds_refused}.{instead} (docs/axes.md, Methods per axis)."
        )

    def record(self) -> dict[str, object]:
        """What a run folder stores about the axis: name, groups, whose word lists, source
        and hash."""
        return {
            "name": self.name,
            "groups": list(self.groups),
            "word_lists": self.word_lists,
            "source": self.source,
            "hash": self.hash,
            "tuples": len(self.tuples),
        }
