"""The substitution engine: gendered words, context pronouns and given names.

``CounterfactualSubstituter.edits(text)`` returns the character-level edits that turn a text
into its counterfactual; ``substitute`` applies them. Keeping the edits (not only the new
text) is what lets cdsbias.cds.gap re-derive GAP's offsets exactly.

Words are the maximal runs of letters (Unicode-aware), with an inner apostrophe kept only
when it is not a clitic: "ma'am" and "O'Neill" are one word, "he's" is "he" + "'s". So
possessives and clitics keep their suffix ("the king's" -> "the queen's"), hyphenated
compounds swap their gendered part ("half-brother" -> "half-sister"), and words that merely
contain a gendered string ("mason", "Hershey", "shepherd") never match.

Given names (rule-based; with spaCy, NER overrides the rules where it tags an entity, see
``_ner_given_names`` and cdsbias.cds.spacy_analysis):
a capitalised word from the name-pair list is swapped only where it is used as a given name.
It is *not* swapped when

* it follows another capitalised word of the same name ("Phoebe Thomas", "J. Lee"): a
  surname. A name seen in surname position anywhere in a document is not swapped on its
  own anywhere in that document ("Thomas said"), which keeps each document consistent;
* it follows Mr/Mrs/Ms/Dr/Professor/Senator/... without a further capitalised word
  ("Mr. Thomas"); royal and religious titles (King, Queen, Sir, Saint, Father, ...) take a
  given name ("Sir Thomas");
* it follows "the"/"a"/"an" or a place word ("Port Phillip", "Mount Vernon"), precedes a
  place or organisation word ("Virginia Beach", "Summer Olympics"), is a saint's name in an
  institution's name ("St. Mary's Church"), or is part of a hyphenated compound
  ("Monte-Carlo"). These are not surnames either, so they do not stop the name from being
  swapped elsewhere in the document;
* it is lower case ("bill", "will"): a common word;
* it is an ambiguous name (ambiguous_given_names.tsv): class ``proper`` (May, Virginia,
  Earl, Von) only swaps in a full name ("May Whitty"); class ``word`` (Will, Bill, Mark)
  does not swap at the start of a sentence unless a surname follows ("Will Smith" yes,
  "Will you" no).

The name map is a bijection, so a document swaps every occurrence of a name the same way.

Titles before a name (TITLE_MAP): Lord <-> Lady, Count <-> Countess, Sir <-> Dame and
Miss <-> Mister ("Miss Marple" <-> "Mister Marple", "Miss World" <-> "Mister World"); Mr <->
Mrs come from the word list, where Ms -> Mr is one way (see the word-list README).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from cdsbias.cds.pronouns import her_is_possessive, his_is_independent, word_set
from cdsbias.cds.wordlists import WordLists, load_wordlists

# Letters, plus inner apostrophes that are not clitics ('s 'd 'll 're 've 'm 't).
WORD_PATTERN = re.compile(r"[^\W\d_]+(?:['’](?!(?i:s|d|ll|re|ve|m|t)\b)[^\W\d_]+)*")

# Function words that are capitalised only because they start a sentence.
SENTENCE_STARTERS = word_set(
    """the a an and but or so then when while after before as at in on of for from by with
    to if though although because since until during his her he she they we you i it its
    their our my your this that these those there here what which who whom whose where why
    how not no yes all both each every some many most other another such one two three
    meanwhile later however also like unlike despite according under over between among
    following"""
)
# Titles before which a lone name is a surname ("Mr. Thomas", "Senator Warren").
SURNAME_TITLES = word_set(
    """mr mrs ms miss mister mx dr doctor professor prof judge justice senator sen governor gov
    president pres chancellor secretary minister chairman chairwoman director coach
    detective inspector sergeant sgt officer agent captain capt colonel col general gen
    lieutenant lt admiral commander corporal mayor councillor councilman councilwoman
    congressman congresswoman representative rep ambassador commissioner bishop archbishop
    cardinal reverend rev rabbi imam pastor deacon canon constable sheriff deputy chief"""
)
# Titles that take a given name ("Sir Thomas", "Queen Mary", "Father Brown" aside).
GIVEN_NAME_TITLES = word_set(
    """king queen prince princess duke duchess lord lady sir dame saint st pope sister
    brother father mother aunt uncle cousin emperor empress tsar tsarina czar czarina granny
    grandma grandpa nanny"""
)
# A name right before one of these is part of a place or organisation name.
PLACE_HEADS = word_set(
    """River Street St Road Avenue Ave Boulevard Lane Drive County City Town Island Islands
    Beach Park Lake Bay Mountain Mountains Valley Falls Hall Square Bridge Station Airport
    University College School Academy Institute Hospital Church Cathedral Chapel Award Awards
    Prize Foundation Center Centre Records Company Corporation Inc Ltd Club Stadium Theatre
    Theater Museum Gallery Hotel Street Mall Sea Ocean Harbor Harbour Point Cape Fort State
    Province Township Parish District Olympics Games Cup"""
)
# Before a name these make a place ("Port Phillip", "Mount Vernon", "Lake Louise"): the name
# is neither a given name nor evidence that it is a surname elsewhere in the document.
PLACE_PREFIXES = word_set("Port Mount Mt Lake Cape Fort Point")
# Capitalised before a name ("Lady Adelaide", "Count Dracula", "Countess of Wessex") these
# are titles with their own counterpart, which may differ from the common word's
# ("lady" -> "gentleman", but "Lady Adelaide" -> "Lord ...").
TITLE_MAP = {
    "lord": "lady",
    "lady": "lord",
    "count": "countess",
    "countess": "count",
    "sir": "dame",
    "dame": "sir",
    # "Miss Marple" <-> "Mister Marple", "Miss World" <-> "Mister World" (the men's pageant);
    # "Mr" stays paired with "Mrs". Lower-case "miss" is a verb and is never swapped.
    "miss": "mister",
    "mister": "miss",
}
_ARTICLES = frozenset({"the", "a", "an"})
_SAINTS = frozenset({"st", "saint", "ste"})
ABBREVIATIONS = frozenset({"mr", "mrs", "ms"})
_SENTENCE_END = frozenset(".!?\n")
# How much text after a "her" the pronoun rules may look at (a few words).
_REST_CHARS = 80


@dataclass(frozen=True)
class Edit:
    """One substitution.

    Attributes:
        start: Start offset in the original text.
        end: End offset (exclusive) in the original text.
        original: ``text[start:end]``.
        replacement: The substitute, in the original's case.
        kind: ``"word"``, ``"pronoun"`` or ``"name"``.
    """

    start: int
    end: int
    original: str
    replacement: str
    kind: str

    @property
    def key(self) -> str:
        """Report key of the pair, e.g. ``"he->she"`` or ``"Mary->James"``."""
        if self.kind == "name":
            return f"{self.original}->{self.replacement}"
        return f"{self.original.lower()}->{self.replacement.lower()}"


@dataclass
class Analysis:
    """Decisions a part-of-speech tagger / NER made for one text, keyed by start offset.

    Attributes:
        possessive: For each ``her``/``his`` token start, True if it is a possessive
            determiner (her -> his, his -> her), False if object / independent (-> him / hers).
        given_names: Starts of tokens tagged as the given-name part of a PERSON entity, or
            None when the analyser does no NER (then the rules decide).
        surnames: Starts of tokens tagged as a later part of a PERSON entity.
    """

    possessive: dict[int, bool] = field(default_factory=dict)
    given_names: set[int] | None = None
    surnames: set[int] = field(default_factory=set)


class Analyzer(Protocol):
    """Optional linguistic analysis (e.g. spaCy) that overrides the rule-based decisions."""

    name: str

    def analyze_many(self, texts: Iterable[str]) -> list[Analysis]:
        """Analyses several texts (batched for speed)."""
        ...


def match_case(source: str, replacement: str) -> str:
    """Gives ``replacement`` the case pattern of ``source`` (HIS -> HER, He -> She)."""
    if len(source) > 1 and source.isupper():
        return replacement.upper()
    if source[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _is_title_case(word: str) -> bool:
    return word[:1].isupper() and word[1:].islower()


class CounterfactualSubstituter:
    """Computes gender-counterfactual edits for texts.

    Args:
        wordlists: Word and name lists; default the shipped ones (names included).
        names: Whether to swap first names.
        analyzer: Optional ``Analyzer`` (spaCy) whose decisions override the rules.
    """

    def __init__(
        self,
        wordlists: WordLists | None = None,
        *,
        names: bool = True,
        analyzer: Analyzer | None = None,
    ) -> None:
        self.wordlists = wordlists if wordlists is not None else load_wordlists(names=names)
        self.word_map = self.wordlists.word_map
        self.name_map = self.wordlists.name_map if names else {}
        self.ambiguous_names = self.wordlists.ambiguous_names
        self.analyzer = analyzer

    @functools.cached_property
    def known_words(self) -> frozenset[str]:
        """Every word the lists swap (both sides, names lower-cased): a substitution report
        counts a gendered-looking word outside this set as unlisted."""
        return frozenset(
            set(self.word_map)
            | set(self.word_map.values())
            | {name.lower() for name in self.name_map}
        )

    @property
    def method(self) -> str:
        """``"rules"`` or the analyser's name (e.g. ``"spacy:en_core_web_sm"``)."""
        return self.analyzer.name if self.analyzer is not None else "rules"

    def substitute(self, text: str) -> str:
        """Returns the counterfactual of ``text``."""
        return apply_edits(text, self.edits(text))

    def substitute_many(self, texts: list[str]) -> list[str]:
        """Returns the counterfactuals of several texts (one analyser batch)."""
        return [
            apply_edits(text, edits)
            for text, edits in zip(texts, self.edits_many(texts), strict=True)
        ]

    def edits_many(self, texts: list[str]) -> list[list[Edit]]:
        """Returns the edits of several texts, running the analyser in one batch."""
        if self.analyzer is None:
            return [self.edits(text) for text in texts]
        analyses = self.analyzer.analyze_many(texts)
        return [self.edits(text, analysis) for text, analysis in zip(texts, analyses, strict=True)]

    def edits(self, text: str, analysis: Analysis | None = None) -> list[Edit]:
        """Returns the substitutions for one text, sorted by position and non-overlapping.

        Args:
            text: The document.
            analysis: Precomputed analyser output; computed here if an analyser is set and
                this is None.
        """
        if analysis is None and self.analyzer is not None:
            analysis = self.analyzer.analyze_many([text])[0]
        tokens = [
            (match.start(), match.end(), match.group()) for match in WORD_PATTERN.finditer(text)
        ]
        name_map = self.name_map
        word_map = self.word_map
        lowercase_only = self.wordlists.lowercase_only
        given_decisions: dict[int, bool] = {}
        if name_map:
            given_decisions = self._given_name_decisions(text, tokens, analysis)
        edits: list[Edit] = []
        for index, (start, end, word) in enumerate(tokens):
            lower = word.lower()
            if word != lower and not word.isupper() and not word[1:].islower():
                continue  # mixed case ("McDonald", "MaMa"): a brand or a name, left alone
            if lower == "her" or lower == "his":
                replacement = self._pronoun(text, tokens, index, lower, analysis)
                edits.append(Edit(start, end, word, match_case(word, replacement), "pronoun"))
            elif lower == "him" or lower == "hers":
                replacement = "her" if lower == "him" else "his"
                edits.append(Edit(start, end, word, match_case(word, replacement), "pronoun"))
            elif given_decisions.get(start):
                edits.append(Edit(start, end, word, name_map[word], "name"))
            elif (lower in word_map or lower in TITLE_MAP) and not self._is_part_of_name(
                text, tokens, index
            ):
                if lower in TITLE_MAP and _is_title_before_name(text, tokens, index):
                    replacement = TITLE_MAP[lower]
                elif (lower in lowercase_only and word != lower) or (
                    lower in ABBREVIATIONS and word.isupper()  # "MS. 6947" is a manuscript
                ):
                    continue
                elif lower in word_map:
                    replacement = word_map[lower]
                else:
                    continue
                edits.append(Edit(start, end, word, match_case(word, replacement), "word"))
        return edits

    def _pronoun(
        self,
        text: str,
        tokens: list[tuple[int, int, str]],
        index: int,
        lower: str,
        analysis: Analysis | None,
    ) -> str:
        start, end, _ = tokens[index]
        possessive = analysis.possessive.get(start) if analysis is not None else None
        if possessive is None:
            if index + 1 < len(tokens):
                next_start, _, next_word = tokens[index + 1]
                gap_after = text[end:next_start]
            else:
                next_word, gap_after = "", text[end:]
            gap_after_next, word_after_next = "", ""
            if index + 2 < len(tokens):
                gap_after_next = text[tokens[index + 1][1] : tokens[index + 2][0]]
                word_after_next = tokens[index + 2][2]
            if lower == "her":
                # Only a verb in the same clause governs "her": not one before a full stop.
                # A closing quote may stand between them: "by ``lending'' her Alfie's".
                previous_word = ""
                if index and text[tokens[index - 1][1] : start].strip().strip("'’\"”") == "":
                    previous_word = tokens[index - 1][2]
                possessive = her_is_possessive(
                    previous_word,
                    gap_after,
                    next_word,
                    gap_after_next,
                    word_after_next,
                    rest=text[end : end + _REST_CHARS],
                    before=text[max(0, start - _REST_CHARS) : start],
                )
            else:
                previous_word = tokens[index - 1][2] if index else ""
                possessive = not his_is_independent(
                    gap_after, next_word, gap_after_next, word_after_next, previous_word
                )
        if lower == "her":
            return "his" if possessive else "him"
        return "her" if possessive else "hers"

    def _is_part_of_name(self, text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
        """A capitalised gendered word right after a given name is a surname ("Stephen King")."""
        word = tokens[index][2]
        if not word[:1].isupper() or index == 0:
            return False
        _, previous_end, previous = tokens[index - 1]
        gap = text[previous_end : tokens[index][0]]
        if gap == " " and previous in self.name_map:
            return True
        return len(previous) == 1 and previous.isupper() and gap == ". "

    def _given_name_decisions(
        self,
        text: str,
        tokens: list[tuple[int, int, str]],
        analysis: Analysis | None,
    ) -> dict[int, bool]:
        """Decides, for each name-list token, whether it is used as a given name here."""
        name_map = self.name_map
        candidates = [
            index
            for index, (_, _, word) in enumerate(tokens)
            if word in name_map and _is_title_case(word)
        ]
        if not candidates:
            return {}
        rule_decisions = {}
        surname_evidence: set[str] = set()
        for index in candidates:
            verdict = self._rule_given_name(text, tokens, index)
            rule_decisions[index] = verdict
            if verdict == "surname":
                surname_evidence.add(tokens[index][2])
        if analysis is not None and analysis.given_names is not None:
            return self._ner_given_names(tokens, candidates, rule_decisions, analysis)
        decisions = {}
        for index in candidates:
            start, _, word = tokens[index]
            verdict = rule_decisions[index]
            decisions[start] = verdict == "full" or (
                verdict == "given" and word not in surname_evidence
            )
        return decisions

    def _ner_given_names(
        self,
        tokens: list[tuple[int, int, str]],
        candidates: list[int],
        rule_decisions: dict[int, str],
        analysis: Analysis,
    ) -> dict[int, bool]:
        """Combines NER with the rules, consistently across the document.

        NER overrides the rules where it tags a PERSON: its given name is swapped, its
        surname is not. Where NER
        has none (it misses many names, and more so rare or swapped ones), the rules decide;
        relying on NER alone would make a second substitution miss names the first one
        introduced. A name NER tagged as a surname anywhere ("Phoebe Thomas") is not swapped
        on its own elsewhere ("Thomas said").
        """
        assert analysis.given_names is not None
        refuted = {tokens[i][2] for i in candidates if tokens[i][0] in analysis.surnames}
        refuted.update(tokens[i][2] for i in candidates if rule_decisions[i] == "surname")
        decisions = {}
        for index in candidates:
            start, _, word = tokens[index]
            verdict = rule_decisions[index]
            if start in analysis.surnames:
                decisions[start] = False
            elif start in analysis.given_names:
                decisions[start] = word not in refuted or verdict == "full"
            else:
                decisions[start] = verdict == "full" or (verdict == "given" and word not in refuted)
        return decisions

    def _rule_given_name(self, text: str, tokens: list[tuple[int, int, str]], index: int) -> str:
        """Classifies one name-list token as ``full`` (first part of a full name), ``given``
        (standalone given name), ``surname`` or ``no`` (not a name here)."""
        start, end, word = tokens[index]
        if text[start - 1 : start] == "-" or text[end : end + 1] == "-":
            return "no"  # inside a hyphenated compound: "Monte-Carlo", "Jean-Paul"
        count = len(tokens)
        next_word = tokens[index + 1][2] if index + 1 < count else ""
        followed_by_capital = (
            bool(next_word) and next_word[:1].isupper() and text[end : tokens[index + 1][0]] == " "
        )
        if followed_by_capital and next_word in PLACE_HEADS:
            return "no"
        if (
            index
            and tokens[index - 1][2].lower() in _SAINTS
            and text[end : end + 3] in ("'s ", "’s ")
            and index + 2 < count  # tokens: "Mary", "s", "Church"
            and tokens[index + 2][2] in PLACE_HEADS
        ):
            return "no"  # "St. Mary's Church", "St John's College": a church, not a person
        sentence_initial = index == 0
        if index:
            previous_start, previous_end, previous = tokens[index - 1]
            gap = text[previous_end:start]
            previous_lower = previous.lower()
            if (previous_lower in _ARTICLES or previous in PLACE_PREFIXES) and gap == " ":
                return "no"
            adjacent = previous[:1].isupper() and (
                gap == " "
                or (gap == ". " and (len(previous) == 1 or previous_lower in SURNAME_TITLES))
            )
            if adjacent:
                previous_gap = text[tokens[index - 2][1] : previous_start] if index > 1 else "\n"
                previous_starts_sentence = index == 1 or any(
                    c in _SENTENCE_END for c in previous_gap
                )
                if previous_lower in GIVEN_NAME_TITLES:
                    return "full" if followed_by_capital else "given"
                if previous_lower in SURNAME_TITLES:
                    return "full" if followed_by_capital else "surname"
                if not (previous_starts_sentence and previous_lower in SENTENCE_STARTERS):
                    if previous in self.name_map and followed_by_capital:
                        return "full"  # a middle name: "Mary Ann Smith"
                    return "surname"
            sentence_initial = any(char in _SENTENCE_END for char in gap)
        ambiguity = self.ambiguous_names.get(word)
        if ambiguity and next_word == "of":  # "Dean of Admissions", "Earl of Derby"
            return "no"
        if ambiguity == "proper" and not followed_by_capital:
            return "no"
        if ambiguity == "word" and sentence_initial and not followed_by_capital:
            return "no"
        return "full" if followed_by_capital else "given"


def _is_title_before_name(text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
    """A capitalised word followed by a capitalised word or "of" + capitalised word."""
    if not tokens[index][2][:1].isupper():
        return False
    for offset in (1, 2):
        if index + offset >= len(tokens):
            return False
        start = tokens[index + offset][0]
        previous_end = tokens[index + offset - 1][1]
        gap = text[previous_end:start]
        if gap == " *":  # GAP writes non-ASCII letters as "*": "Countess of *ttingen"
            return True
        if gap not in (" ", ". "):
            return False
        word = tokens[index + offset][2]
        if word[:1].isupper():
            return True
        if word != "of":
            return False
    return False


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Applies sorted, non-overlapping edits to ``text``."""
    if not edits:
        return text
    pieces = []
    position = 0
    for edit in edits:
        pieces.append(text[position : edit.start])
        pieces.append(edit.replacement)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def map_offset(edits: list[Edit], offset: int, *, is_end: bool = False) -> int:
    """Maps an offset in the original text to the substituted text.

    An offset inside an edit maps to the start of its replacement (or, for a span end, to
    the end of the replacement), so a span keeps covering whole substituted words.
    """
    shift = 0
    for edit in edits:
        if edit.end <= offset:
            shift += len(edit.replacement) - (edit.end - edit.start)
        elif edit.start < offset:  # offset falls inside this edit
            if is_end:
                return edit.start + shift + len(edit.replacement)
            return edit.start + shift
        else:
            break
    return offset + shift
