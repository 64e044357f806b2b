"""English gender-neutral rewriting: he/she -> singular *they* (or a neopronoun family),
with verb agreement; optionally gendered person nouns and given names.

``EnglishNeutral(pronouns="they").substitute("She is proud of her son.")`` gives "They are
proud of their son.". It is a :class:`~cdsbias.cds.languages.base.Language`, so GAP files,
corpora, streaming and the report use it as they use binary CDS (``gender_forms: neutral``,
cdsbias.cds.forms).

What changes, by default (the annotation convention of Sun et al. 2021, "They, Them,
Theirs: Rewriting with Gender-Neutral English", arXiv:2102.06788: what refers by pronoun
changes, "his girlfriend" -> "their girlfriend", "the best actress" stays):

* **Pronouns** (kind ``pronoun``), into the family's case forms
  (cdsbias.cds.pronoun_families): *he/she* -> nominative; *him* -> accusative; *his* ->
  dependent or independent possessive and *her* -> accusative or dependent possessive, by the
  binary rules' syntax decision (en_pronouns: *her* 178/180 right on hand-labelled GAP, or
  spaCy's tags when an analyser is set), corrected for informal text by the cues of
  cdsbias.cds.languages.en_informal (*behind his back* -> *their*, *told her #truestory* ->
  *them*); *hers* -> independent possessive;
  *himself/herself* -> reflexive (*themself*, or *themselves* with ``reflexive``).
* **Verb agreement** (kind ``agreement``) for *they* only, which agrees like a plural:
  cdsbias.cds.languages.en_agreement (*she goes* -> *they go*, *does he* -> *do they*,
  *he's* -> *they're* or *they've* by what *'s* stands for; *he'd*, *she'll* keep their
  clitic). The neopronouns agree in the singular (*xe is*, *ze has*): no verb changes.
* ``nouns=True``: gendered person nouns from ``resources/wordlists/en_neutral_nouns.tsv``
  (*chairman* -> *chair*, *actress* -> *actor*; kind ``noun``); kinship terms (*mother* ->
  *parent*, *sister* -> *sibling*) only with ``kinship=True`` too. A capitalised noun
  inside a sentence is taken for part of a name or title and kept.
* ``names=True``: given names (as binary CDS finds them) become a unisex name from
  ``en_unisex_names.txt``, the same one for each name everywhere (kind ``name``).

What stays, counted as skips in the report: titles (*Mr*, *Mrs*, *Lady*: part of a name),
gendered nouns and kinship terms not asked for, given names (a name does not say which
pronouns a person uses), a pronoun joined by a hyphen to a letter (*his-and-hers*,
*she-wolf*, a made-up *Zig-zag-her-zog*). URLs, handles, e-mails and code never reach the
rules (cdsbias.cds.guard). Words that only look gendered (*Herbert*, *shepherd*) are not
words of any list and never match.
"""

from __future__ import annotations

import functools
import hashlib

from cdsbias.cds.edits import Edit, match_case
from cdsbias.cds.languages.base import Skip
from cdsbias.cds.languages.en import ABBREVIATIONS, TITLE_MAP, WORD_PATTERN, English
from cdsbias.cds.languages.en_agreement import (
    SUBORDINATORS,
    contraction_is_has,
    coordinated_verbs,
    inverted_auxiliary,
    is_past_tense,
    plural_verb,
    verb_after,
)
from cdsbias.cds.languages.en_analysis import Analysis, Analyzer
from cdsbias.cds.languages.en_informal import her_is_object, his_is_determiner
from cdsbias.cds.pronoun_families import PronounFamily, pronoun_family
from cdsbias.cds.wordlists import data_lines, load_word_sets, resource_path
from cdsbias.errors import CdsbiasError

_NOMINATIVES = frozenset({"he", "she"})
_PRONOUNS = frozenset({"he", "she", "him", "his", "her", "hers", "himself", "herself"})
_TITLES = ABBREVIATIONS | frozenset(TITLE_MAP) | {"madam", "madame", "mister", "master"}
_CONTRACTION_S = ("'s", "’s")


def _in_hyphenated_word(text: str, start: int, end: int) -> bool:
    """True if the word ``text[start:end]`` is joined by a hyphen to a letter or digit on
    either side: part of a compound or a made-up word (*his-and-hers*, *she-wolf*,
    *Zig-zag-her-zog*), not a pronoun to rewrite."""
    return (start >= 2 and text[start - 1] == "-" and text[start - 2].isalnum()) or (
        text[end : end + 1] == "-" and text[end + 1 : end + 2].isalnum()
    )


def _quote_or_capitals_after(text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
    """True if a quote or a word in capitals follows ``tokens[index]``."""
    end = tokens[index][1]
    if text[end : end + 2].strip()[:1] in ("'", '"', "‘", "“"):
        return True
    following = tokens[index + 1][2] if index + 1 < len(tokens) else ""
    return len(following) > 1 and following.isupper()


def load_neutral_nouns() -> dict[str, tuple[str, str]]:
    """``en_neutral_nouns.tsv``: gendered noun -> (neutral noun, group ``noun``/``kinship``).

    Raises:
        CdsbiasError: ``file:line: problem`` for a malformed row or a noun listed twice.
    """
    path = resource_path("en_neutral_nouns.tsv")
    nouns: dict[str, tuple[str, str]] = {}
    for line_number, line in data_lines(path):
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 3 or fields[2] not in ("noun", "kinship"):
            raise CdsbiasError(
                f"{path}:{line_number}: expected gendered<TAB>neutral<TAB>noun|kinship"
            )
        if fields[0] in nouns:
            raise CdsbiasError(f"{path}:{line_number}: '{fields[0]}' is listed twice")
        nouns[fields[0]] = (fields[1], fields[2])
    return nouns


NEUTRAL_NOUNS = load_neutral_nouns()
UNISEX_NAMES = tuple(sorted(load_word_sets(resource_path("en_unisex_names.txt"))["unisex_names"]))


def unisex_name(name: str) -> str:
    """The unisex name that replaces given name ``name`` (stable across runs/processes)."""
    digest = hashlib.blake2b(name.encode(), digest_size=4).digest()
    return UNISEX_NAMES[int.from_bytes(digest, "big") % len(UNISEX_NAMES)]


class EnglishNeutral(English):
    """Rewrites English text into gender-neutral pronouns (module docstring).

    Args:
        pronouns: The family written: ``they`` (default), ``xe``, ``ze`` or ``ey``.
        reflexive: The reflexive of *they*: ``themself`` (default) or ``themselves``.
        nouns: Also rewrite gendered person nouns (not kinship terms).
        kinship: With ``nouns``, also rewrite kinship terms.
        names: Replace given names by unisex names.
        analyzer: Optional spaCy analyser for the her/his decisions.
    """

    swap_examples = ("he/she→they", "his/her→their")

    def __init__(
        self,
        *,
        pronouns: str = "they",
        reflexive: str = "themself",
        nouns: bool = False,
        kinship: bool = False,
        names: bool = False,
        analyzer: Analyzer | None = None,
    ) -> None:
        # Given names are always detected (to count them as kept); ``names`` says whether
        # they are replaced.
        super().__init__(names=True, analyzer=analyzer)
        self.family: PronounFamily = pronoun_family(pronouns, reflexive=reflexive, neutral=True)
        self.nouns = nouns
        self.kinship = kinship
        self.neutral_names = names
        self._map = {
            "he": self.family.nominative,
            "she": self.family.nominative,
            "him": self.family.accusative,
            "hers": self.family.possessive_independent,
            "himself": self.family.reflexive,
            "herself": self.family.reflexive,
        }

    @functools.cached_property
    def known_words(self) -> frozenset[str]:
        """The binary lists' words (what the report treats as listed) and the nouns'."""
        return super().known_words | frozenset(NEUTRAL_NOUNS)

    def edits_many(
        self, texts: list[str], *, skipped: list[list[Skip]] | None = None
    ) -> list[list[Edit]]:
        """The edits of several texts, running the analyser (if any) in one batch."""
        analyses: list[Analysis | None] = (
            list(self.analyzer.analyze_many(texts))
            if self.analyzer is not None
            else [None] * len(texts)
        )
        if skipped is None:
            return [self.edits(text, analysis) for text, analysis in zip(texts, analyses)]
        result = []
        for text, analysis in zip(texts, analyses, strict=True):
            own: list[Skip] = []
            result.append(self.edits(text, analysis, skipped=own))
            skipped.append(own)
        return result

    def edits(
        self,
        text: str,
        analysis: Analysis | None = None,
        *,
        skipped: list[Skip] | None = None,
    ) -> list[Edit]:
        """The neutral rewrite of one text as sorted, non-overlapping edits.

        Args:
            text: The document.
            analysis: Precomputed analyser output (computed if an analyser is set).
            skipped: If given, receives a :class:`Skip` per title, gendered noun, kinship
                term or given name left unchanged.
        """
        if analysis is None and self.analyzer is not None:
            analysis = self.analyzer.analyze_many([text])[0]
        tokens = [(m.start(), m.end(), m.group()) for m in WORD_PATTERN.finditer(text)]
        # Given names only change the output with ``names`` (replaced) or ``nouns`` (a name
        # is not a noun to rewrite); otherwise they are found only to be counted as kept.
        names = (
            self._given.decisions(text, tokens, analysis)
            if skipped is not None or self.neutral_names or self.nouns
            else {}
        )
        edits: dict[int, Edit] = {}
        plural = self.family.plural_agreement
        for index, (start, end, word) in enumerate(tokens):
            lower = word.lower()
            if word != lower and not word.isupper() and not word[1:].islower():
                continue  # mixed case ("McDonald"): a brand or a name
            if lower in _PRONOUNS:
                if (
                    text[start - 1 : start] == "-" or text[end : end + 1] == "-"
                ) and _in_hyphenated_word(text, start, end):
                    if skipped is not None:
                        skipped.append(Skip(start, end, word, "pronoun in a hyphenated word kept"))
                    continue
                edits[start] = Edit(
                    start,
                    end,
                    word,
                    self._pronoun_form(text, tokens, index, lower, analysis),
                    "pronoun",
                )
                if plural and lower in _NOMINATIVES:
                    for edit in self._agreement(text, tokens, index):
                        edits.setdefault(edit.start, edit)
            elif names.get(start):
                if self.neutral_names:
                    edits[start] = Edit(start, end, word, unisex_name(word), "name")
                elif skipped is not None:
                    skipped.append(Skip(start, end, word, "given name kept"))
            elif lower in NEUTRAL_NOUNS or lower in self.word_map or lower in TITLE_MAP:
                self._noun(text, tokens, index, edits, skipped)
        return [edits[start] for start in sorted(edits)]

    def _pronoun_form(
        self,
        text: str,
        tokens: list[tuple[int, int, str]],
        index: int,
        lower: str,
        analysis: Analysis | None,
    ) -> str:
        word = tokens[index][2]
        if lower in self._map:
            return match_case(word, self._map[lower])
        family = self.family
        # The binary rules decide the syntax: her -> his (possessive) / him (object), his
        # -> her (before a noun) / hers (standing alone); the informal-text cues of
        # en_informal correct them ("behind his back", "told her #truestory"). A cue can
        # only turn an object "her" into a possessive before a quote or a word in capitals.
        binary = self._pronoun(text, tokens, index, lower, analysis)
        if binary == "hers" and his_is_determiner(text, tokens, index):
            binary = "her"
        elif lower == "her" and (binary == "his" or _quote_or_capitals_after(text, tokens, index)):
            cue = her_is_object(text, tokens, index)
            if cue is not None:
                binary = "him" if cue else "his"
        form = {
            "his": family.possessive_dependent,
            "him": family.accusative,
            "her": family.possessive_dependent,
            "hers": family.possessive_independent,
        }[binary]
        return match_case(word, form)

    def _agreement(self, text: str, tokens: list[tuple[int, int, str]], index: int) -> list[Edit]:
        """Edits that make the verb of the rewritten subject ``tokens[index]`` plural."""
        end = tokens[index][1]
        clitic = text[end : end + 2]
        if clitic in _CONTRACTION_S and (end + 2 == len(text) or not text[end + 2].isalpha()):
            has = contraction_is_has(text, tokens, index)
            return [Edit(end, end + 2, clitic, clitic[0] + ("ve" if has else "re"), "agreement")]
        auxiliary = inverted_auxiliary(text, tokens, index)
        if auxiliary is not None:
            return [self._verb_edit(tokens, auxiliary)]
        verb = verb_after(text, tokens, index)
        if verb is None:
            return []
        lists = not index or tokens[index - 1][2].lower() not in SUBORDINATORS
        if plural_verb(tokens[verb][2].lower()) is None:
            # A past tense does not agree, but a later is/was/has/does of its predicate
            # does ("wanted to come but was tired" -> "but were").
            if not is_past_tense(tokens[verb][2].lower()):
                return []
            found = coordinated_verbs(text, tokens, verb, lists=lists, only_irregular=True)
        else:
            found = [verb, *coordinated_verbs(text, tokens, verb, lists=lists)]
        return [self._verb_edit(tokens, position) for position in found]

    @staticmethod
    def _verb_edit(tokens: list[tuple[int, int, str]], position: int) -> Edit:
        start, end, word = tokens[position]
        plural = plural_verb(word.lower())
        assert plural is not None  # callers pass verbs plural_verb knows
        return Edit(start, end, word, match_case(word, plural), "agreement")

    def _noun(
        self,
        text: str,
        tokens: list[tuple[int, int, str]],
        index: int,
        edits: dict[int, Edit],
        skipped: list[Skip] | None,
    ) -> None:
        """A gendered noun or title: rewritten if asked for, else counted as kept."""
        start, end, word = tokens[index]
        lower = word.lower()
        entry = NEUTRAL_NOUNS.get(lower)
        before = text[tokens[index - 1][1] : start] if index else "."
        inside = before.strip(" \"'“‘(") not in (".", "!", "?")
        capitalised_inside = word[:1].isupper() and inside
        if lower in _TITLES:
            reason = "title kept"
        elif entry is None:
            reason = "gendered noun kept"
        elif capitalised_inside:
            reason = "capitalised noun kept"
        elif not self.nouns or (entry[1] == "kinship" and not self.kinship):
            reason = "kinship term kept" if entry[1] == "kinship" else "gendered noun kept"
        else:
            edits[start] = Edit(start, end, word, match_case(word, entry[0]), "noun")
            return
        if skipped is not None:
            skipped.append(Skip(start, end, word, reason))
