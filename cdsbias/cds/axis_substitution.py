"""Substituting the words of a bias axis (race, religion, a user's file) in a text.

A *group mapping* is a list ``mapping[i] = j``: every word of group ``i`` becomes its
counterpart in group ``j`` (``BiasAxis`` tuples, cdsbias.axes). :class:`AxisSubstituter`
finds an axis's words once per text (:meth:`~AxisSubstituter.analyse`) and renders any
number of mappings from that analysis (:meth:`~AxisSubstituter.edits`), so ``counterfactuals:
all`` costs one search, not k-1.

Words, not whitespace tokens, are matched: "Muslim," "Jews." "(Muslim" and "Muslim's" are
found. (bias-bench swaps whitespace tokens of an uncased BERT decode, which splits off
brackets and ;: and glues . , ? ! that its list covers; under transformers 4.16 the decode
also glues "'s" and "''", which it misses: tests/test_cds_axes_bias_bench.py.) A search
with one regular expression of every listed word comes first; only the few places it finds
are looked at word by word, which keeps a corpus without axis words at the cost of one
``re.search``.

English gets the surface rules of :mod:`cdsbias.cds.languages.en_axis_agreement` (which
tuple fits adjective or noun use, colour words only about people, names left alone,
a/an, case). Other languages substitute every match in the original's case: a user's axis
file works there, with no agreement beyond case.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from cdsbias.axes import BiasAxis
from cdsbias.cds.edits import Edit, match_case
from cdsbias.cds.guard import mask, protected_spans
from cdsbias.cds.languages import en_axis_agreement as en

#: A word (letters and digits, inner apostrophes) or one other non-space character. An
#: ordinal is one word: "1st" split into "1" + "st" read as "St" (a saint's name, rule 3).
TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|\S")
#: How far before and after a match the rules look (characters).
WINDOW = 48
_POSSESSIVE = re.compile(r"['’]s?$", re.IGNORECASE)
_SENTENCE_END = frozenset(".!?")
_ABBREVIATIONS = frozenset({"st", "mr", "mrs", "ms", "dr", "rev", "fr"})


@dataclass(frozen=True)
class AxisMatch:
    """One axis word in a text that will be substituted.

    Attributes:
        start: Offset of the word (without a possessive ending).
        end: End offset of the word.
        word: The word as written.
        group: Its group index.
        tuple_index: The tuple its counterparts come from (rule 1).
        article: ``(start, end, text)`` of an ``a``/``an`` right before it, or None.
    """

    start: int
    end: int
    word: str
    group: int
    tuple_index: int
    article: tuple[int, int, str] | None


@dataclass
class Analysis:
    """What :meth:`AxisSubstituter.analyse` finds in one text.

    Attributes:
        matches: The words that a mapping substitutes.
        kept: Axis words left alone, by reason (``not people``, ``name``).
        unlisted: Words that look like axis words but are in no tuple (lower case).
    """

    matches: list[AxisMatch]
    kept: Counter
    unlisted: Counter


class AxisSubstituter:
    """Finds and substitutes an axis's words in texts of one language.

    Args:
        axis: The bias axis.
        language: CDS language code; ``en`` has the agreement rules.
    """

    def __init__(self, axis: BiasAxis, language: str = "en") -> None:
        self.axis = axis
        self.language = language
        self.english = language == "en"
        alternation = trie_pattern(sorted(axis.all_words))
        pattern = rf"(?<![^\W\d_])(?:{alternation})(?![^\W\d_])"
        # The words are lower case: searching the lower-cased text without IGNORECASE is
        # half the cost; a text whose lower case changes length ("İ") is searched as is.
        self._search_lower = re.compile(pattern)
        self._search_any_case = re.compile(pattern, re.IGNORECASE)
        self._tuples: dict[tuple[str, int], list[int]] = {}
        for index, words_ in enumerate(axis.tuples):
            for group, word in enumerate(words_):
                self._tuples.setdefault((word, group), []).append(index)
        self._stems = en.stems(axis.all_words)

    # -- finding -------------------------------------------------------------------------

    def has_match(self, text: str) -> bool:
        """Whether ``text`` contains any listed word (before the rules)."""
        return next(self._finditer(text), None) is not None

    def _finditer(self, text: str) -> Iterator[tuple[int, int]]:
        """Spans of the listed words in ``text`` (any case)."""
        lowered = text.lower()
        if len(lowered) == len(text):
            return (found.span() for found in self._search_lower.finditer(lowered))
        return (found.span() for found in self._search_any_case.finditer(text))

    def analyse(self, text: str, *, unlisted: bool = False) -> Analysis:
        """The axis words of ``text`` that a mapping substitutes, and those left alone.

        Args:
            text: One document.
            unlisted: Also collect words that look like axis words but are in no tuple
                (a pass over every word: for reports, not for training).
        """
        matches: list[AxisMatch] = []
        kept: Counter = Counter()
        # URLs, handles, e-mails and code are blanked before any rule (cdsbias.cds.guard),
        # as in every language's gender rules; a span counts where it hid an axis word.
        spans = protected_spans(text)
        if spans:
            kept.update(
                span.reason for span in spans if self.has_match(text[span.start : span.end])
            )
            text = mask(text, spans)
        for start, end in self._finditer(text):
            word = text[start:end]
            before = list(TOKEN.finditer(text, max(0, start - WINDOW), start))
            after = list(TOKEN.finditer(text, end, min(len(text), end + WINDOW)))
            lower = word.lower()
            group = self.axis.group_of(lower)  # never None: the search finds listed words
            candidates = self._tuples[(lower, group)]  # type: ignore[index]
            if self.english:
                reason = self._keep_reason(lower, word, before, after, text)
                if reason:
                    kept[reason] += 1
                    continue
                tuple_index = self._fitting_tuple(candidates, before, after)
                article = None
                last = before[-1] if before else None
                if (
                    last is not None
                    and last.group().lower() in ("a", "an")
                    and text[last.end() : start].isspace()
                ):
                    article = (last.start(), last.end(), last.group())
            else:
                tuple_index, article = candidates[0], None
            matches.append(AxisMatch(start, end, word, group, tuple_index, article))
        found_unlisted: Counter = Counter()
        if unlisted and self.english:
            for token in TOKEN.finditer(text):
                lower = _POSSESSIVE.sub("", token.group().lower())
                if len(lower) > 3 and en.looks_like_axis_word(
                    lower, self.axis.all_words, self._stems
                ):
                    found_unlisted[lower] += 1
        return Analysis(matches, kept, found_unlisted)

    def _keep_reason(
        self,
        lower: str,
        word: str,
        before: list[re.Match],
        after: list[re.Match],
        text: str,
    ) -> str | None:
        """Why an English axis word is left alone (rules 2 and 3), or None."""
        next_words = [m.group() for m in after]
        if lower in en.COLOUR_WORDS or lower in self.axis.people_only:
            if word[:1].isupper() and en.used_as_surname(word, text):
                return "name"  # "Brady Victor Black ... The Black family's happiness"
            if not self._about_people(lower, before, next_words):
                return "not people"
        if word[:1].isupper() and self._in_name(lower, before, next_words):
            return "name"
        return None

    def _about_people(self, lower: str, before: list[re.Match], after: list[str]) -> bool:
        """Rule 2: a colour word before a person noun, after a people cue, said of a
        person, used as a noun for one, or a plural people noun."""
        if self._is_plural(lower):
            return not (before and before[-1].group().lower() in en.COLOUR_PLURAL_BLOCKERS)
        words_before = [m.group() for m in before]
        if en.after_people_cue(words_before):
            return True
        for token in after:
            low = _POSSESSIVE.sub("", token.lower())  # "the white woman's car"
            if low in en.PERSON_NOUNS:
                return True
            if low in ("and", "or", ",", "-", "/") or low in self.axis.all_words:
                continue
            # "Black and Hispanic workers": names of peoples coordinate like axis words.
            if low in en.PROPER_WORDS or low in ("young", "old", "elderly", "older", "younger"):
                continue
            break
        return en.predicative_of_person(words_before, after) or en.nominal_use(
            words_before, after, self.axis.all_words
        )

    def _is_plural(self, lower: str) -> bool:
        forms = self.axis.forms
        index = self.axis.tuple_of(lower)
        if forms and index is not None and forms[index] is not None:
            return forms[index] == "plural"
        return lower.endswith("s")

    def _in_name(self, lower: str, before: list[re.Match], after: list[str]) -> bool:
        """Rule 3: a capitalised axis word that is part of a proper name."""
        following = after[0] if after else ""
        if en.starts_place_name(after):
            return True
        index = self.axis.tuple_of(lower)
        form = self.axis.forms[index] if self.axis.forms and index is not None else None
        if (
            form in en.NAME_OF_FORMS
            and following.lower() == "of"
            and len(after) > 1
            and after[1][:1].isupper()
        ):
            return True
        if before:
            previous = before[-1].group()
            previous_lower = _POSSESSIVE.sub("", previous.lower())
            if previous_lower in ("st", "saint") or (previous == "." and _is_st(before)):
                return True
            if (
                form == "other"
                and previous[:1].isupper()
                and previous_lower not in self.axis.all_words
                and previous_lower not in en.DETERMINERS
                and not _starts_sentence(before[:-1])
            ):
                return True
        if form != "other" and following[:1].isupper() and following[:1].isalpha():
            adjective = form in ("adjective", None)
            return not en.capitalised_run_names_person(lower, after, self.axis.all_words, adjective)
        return False

    def _fitting_tuple(
        self, candidates: list[int], before: list[re.Match], after: list[re.Match]
    ) -> int:
        """Rule 1: the tuple whose form fits the word's use (noun or adjective)."""
        if len(candidates) == 1 or not self.axis.forms:
            return candidates[0]
        following = after[0].group().lower() if after else ""
        content_follows = bool(following) and following[:1].isalpha()
        content_follows = content_follows and following not in en.FUNCTION_WORDS
        previous = [m.group().lower() for m in before[-2:]]
        noun_use = not content_follows and any(word in en.DETERMINERS for word in previous)
        wanted = "noun" if noun_use else "adjective"
        for index in candidates:
            if self.axis.forms[index] == wanted:
                return index
        return candidates[0]

    # -- rendering -----------------------------------------------------------------------

    def edits(self, analysis: Analysis, mapping: list[int] | tuple[int, ...]) -> list[Edit]:
        """The edits that apply ``mapping`` to the analysed text.

        Args:
            analysis: :meth:`analyse` of the text.
            mapping: ``mapping[i]`` is the group that group ``i``'s words become.

        Returns:
            Sorted edits; a substituted word's ``kind`` is ``"FROM->TO"`` (group names),
            an article's is ``"article"``.
        """
        groups = self.axis.groups
        result: list[Edit] = []
        for match in analysis.matches:
            target = mapping[match.group]
            if target == match.group:
                continue
            new = self.axis.tuples[match.tuple_index][target]
            case = en.cased if self.english else match_case
            replacement = case(match.word, new)
            if match.article is not None:
                start, end, article = match.article
                wanted = en.article_for(replacement)
                if article.lower() != wanted:
                    new_article = _article_case(article, wanted)
                    result.append(Edit(start, end, article, new_article, "article"))
            kind = f"{groups[match.group]}->{groups[target]}"
            result.append(Edit(match.start, match.end, match.word, replacement, kind))
        return result


def trie_pattern(words: list[str]) -> str:
    """A regular expression matching exactly ``words``, factored by common prefixes.

    ``re`` tries an alternation's branches one by one at every position; sharing prefixes
    (``jew(?:s|ish)?``) makes the search about as fast as one word's, whatever the number
    of words (a document without axis words costs one scan).
    """
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _node_pattern(trie)


def _node_pattern(node: dict[str, dict]) -> str:
    ends = "" in node
    branches = [
        re.escape(char) + _node_pattern(child) for char, child in sorted(node.items()) if char
    ]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    if ends:
        return f"(?:{body})?"
    return body


def _article_case(original: str, wanted: str) -> str:
    if len(original) > 1 and original.isupper():
        return wanted.upper()
    if original[:1].isupper():
        return wanted.capitalize()
    return wanted


def _starts_sentence(before: list[re.Match]) -> bool:
    """Whether the token after ``before`` starts a sentence (nothing or .!? before it)."""
    if not before:
        return True
    if before[-1].group() not in _SENTENCE_END:
        return False
    # "St. Mary's": a full stop after an abbreviation ends no sentence.
    return not (len(before) > 1 and before[-2].group().lower() in _ABBREVIATIONS)


def _is_st(before: list[re.Match]) -> bool:
    """Whether ``before`` ends with "St." ("St. Mary's Church")."""
    return len(before) > 1 and before[-2].group().lower() == "st"
