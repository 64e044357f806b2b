"""The interface every counterfactual-substitution language implements.

A language turns a text into character-level edits (:class:`cdsbias.cds.edits.Edit`, also
importable as ``cdsbias.cds.engine.Edit``): sorted by position, non-overlapping, offsets
into the *original* text, replacements in the original's casing. Everything downstream
(GAP offsets, reports, corpora, training) works on edits and never needs to know the
language. The steps inside ``edits`` are the language's own business: tokenise, find the
gendered units, choose each swap, re-inflect what agrees with it, render in the original's
casing.

Each language lives in its own module beside this one (``en.py``, ``de.py``, ``da.py``)
with its word lists as data files under ``cdsbias/resources/wordlists/``, and one line in
the registry (``cdsbias/cds/languages/__init__.py``); a fourth language is one more module,
its data and that line.

Every language's ``edits`` and ``edits_many`` run behind the guard of cdsbias.cds.guard:
URLs, @handles, e-mail addresses and code spans are blanked out before any rule sees the
text, and each is reported as a :class:`Skip` of its class (``URL kept``, ...). The base
class wraps the methods a subclass defines (``__init_subclass__``), so a new language is
guarded without a line of its own.
"""

from __future__ import annotations

import functools
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

from cdsbias.cds.edits import Edit, apply_edits
from cdsbias.cds.guard import GuardedSpan, mask, outside, protected_spans

#: A run of letters (no digits, no underscore): what every language's rules call a word
#: before its own tokenisation (English adds apostrophes in WORD_PATTERN).
LETTERS = re.compile(r"[^\W\d_]+")


class Skip(NamedTuple):
    """A gendered-looking unit the language deliberately left unchanged.

    Attributes:
        start: Start offset in the original text.
        end: End offset (exclusive).
        original: ``text[start:end]``.
        reason: Why, e.g. ``"ambiguous sie"`` — counted per reason in the report.
    """

    start: int
    end: int
    original: str
    reason: str


class Language(ABC):
    """Gender-counterfactual rules for one language.

    Args:
        names: Whether first names are swapped.
    """

    #: ISO 639-1 code, the value of ``cds_language`` / ``cdsbias cds --language``.
    code: ClassVar[str]
    #: English name of the language, for messages and reports.
    name: ClassVar[str]
    #: Frequent lower-case words that are the language's own and hardly occur in the other
    #: registered languages (its third-person pronouns): how often a corpus uses them tells
    #: whether ``cds_language`` fits it (cdsbias.cds.languages.check_language). Empty: the
    #: language takes no part in that check.
    marker_words: ClassVar[frozenset[str]] = frozenset()
    #: A few typical swaps (word pairs, then a name pair) for model cards, e.g.
    #: ``("he↔she", "his↔her", "John↔Mary")``; the last one is a name pair.
    swap_examples: ClassVar[tuple[str, ...]] = ()
    #: The bias axes (cdsbias.axes) whose shipped words are in this language; CDS on any
    #: other registered axis is refused (``BiasAxis.check_language``). A user's attribute
    #: file is written in the user's language and works in every language.
    axes: ClassVar[tuple[str, ...]] = ("gender",)

    def __init__(self, *, names: bool = True) -> None:
        self.names = names

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Puts the guard (module docstring) around the ``edits``/``edits_many`` that
        ``cls`` itself defines."""
        super().__init_subclass__(**kwargs)
        if "edits" in vars(cls):
            cls.edits = _guarded_edits(vars(cls)["edits"])  # type: ignore[method-assign]
        if "edits_many" in vars(cls):
            cls.edits_many = _guarded_edits_many(vars(cls)["edits_many"])  # type: ignore[method-assign]

    @abstractmethod
    def edits(self, text: str, *, skipped: list[Skip] | None = None) -> list[Edit]:
        """The substitutions that make ``text`` its gender counterfactual.

        Args:
            text: One document.
            skipped: If given, the language appends a :class:`Skip` for every unit it
                recognised but left alone because it could not resolve it.
        """

    @property
    @abstractmethod
    def known_words(self) -> frozenset[str]:
        """Every lower-cased word form the language swaps (both sides, names included)."""

    @property
    def method(self) -> str:
        """How decisions are made, for reports: ``"rules"`` unless an analyser is used."""
        return "rules"

    def edits_many(
        self, texts: list[str], *, skipped: list[list[Skip]] | None = None
    ) -> list[list[Edit]]:
        """The edits of several texts (a language with a batched analyser overrides this).

        Args:
            texts: The documents.
            skipped: If given, one list of :class:`Skip` per text is appended to it.
        """
        if skipped is None:
            return [self.edits(text) for text in texts]
        result = []
        for text in texts:
            own: list[Skip] = []
            result.append(self.edits(text, skipped=own))
            skipped.append(own)
        return result

    def substitute(self, text: str) -> str:
        """Returns the counterfactual of ``text``."""
        return apply_edits(text, self.edits(text))

    def substitute_many(self, texts: list[str]) -> list[str]:
        """Returns the counterfactuals of several texts."""
        return [
            apply_edits(text, edits)
            for text, edits in zip(texts, self.edits_many(texts), strict=True)
        ]

    def unlisted_words(self, text: str) -> list[str]:
        """Lower-case words of ``text`` that look gendered but that no list covers, for the
        report that helps curate the lists; default none."""
        return []


# Set while a guarded call runs in this thread: the calls a language makes to its own
# methods (edits_many -> edits, MixedForms -> its engines) get text already masked.
_ACTIVE = threading.local()


def _guard_skips(text: str, spans: list[GuardedSpan]) -> list[Skip]:
    return [Skip(span.start, span.end, text[span.start : span.end], span.reason) for span in spans]


def _merge(own: list[Skip], text: str, spans: list[GuardedSpan]) -> list[Skip]:
    return sorted(outside(own, spans) + _guard_skips(text, spans), key=lambda skip: skip.start)


def _guarded_edits(method: Callable[..., list[Edit]]) -> Callable[..., list[Edit]]:
    @functools.wraps(method)
    def edits(
        self: Language, text: str, *args: Any, skipped: list[Skip] | None = None, **kwargs: Any
    ) -> list[Edit]:
        if getattr(_ACTIVE, "on", False):
            return method(self, text, *args, skipped=skipped, **kwargs)
        _ACTIVE.on = True
        try:
            spans = protected_spans(text)
            if not spans:
                return method(self, text, *args, skipped=skipped, **kwargs)
            own: list[Skip] | None = [] if skipped is not None else None
            result = outside(method(self, mask(text, spans), *args, skipped=own, **kwargs), spans)
            if skipped is not None and own is not None:
                skipped.extend(_merge(own, text, spans))
            return result
        finally:
            _ACTIVE.on = False

    return edits


def _guarded_edits_many(method: Callable[..., list[list[Edit]]]) -> Callable[..., list[list[Edit]]]:
    @functools.wraps(method)
    def edits_many(
        self: Language, texts: list[str], *args: Any, skipped: list[list[Skip]] | None = None
    ) -> list[list[Edit]]:
        if getattr(_ACTIVE, "on", False):
            return method(self, texts, *args, skipped=skipped)
        _ACTIVE.on = True
        try:
            spans = [protected_spans(text) for text in texts]
            if not any(spans):
                return method(self, texts, *args, skipped=skipped)
            # Only the few texts with spans are masked and filtered.
            masked = [mask(text, own) if own else text for text, own in zip(texts, spans)]
            own_skips: list[list[Skip]] | None = [] if skipped is not None else None
            result = method(self, masked, *args, skipped=own_skips)
            for position, own in enumerate(spans):
                if own:
                    result[position] = outside(result[position], own)
                    if own_skips is not None:
                        own_skips[position] = _merge(own_skips[position], texts[position], own)
            if skipped is not None and own_skips is not None:
                skipped.extend(own_skips)
            return result
        finally:
            _ACTIVE.on = False

    return edits_many
