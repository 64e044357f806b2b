"""English: gendered words, context pronouns (cdsbias.cds.languages.en_pronouns) and given
names (cdsbias.cds.languages.en_names).

``English().edits(text)`` (also ``CounterfactualSubstituter``, its name in
cdsbias.cds.engine) returns the character-level edits that turn a text
into its counterfactual; ``substitute`` applies them. Keeping the edits (not only the new
text) is what lets cdsbias.cds.gap re-derive GAP's offsets exactly.

Words are the maximal runs of letters (Unicode-aware), with an inner apostrophe kept only
when it is not a clitic: "ma'am" and "O'Neill" are one word, "he's" is "he" + "'s". So
possessives and clitics keep their suffix ("the king's" -> "the queen's"), hyphenated
compounds swap their gendered part ("half-brother" -> "half-sister"), and words that merely
contain a gendered string ("mason", "Hershey", "shepherd") never match.

Titles before a name (TITLE_MAP): Lord <-> Lady, Count <-> Countess, Sir <-> Dame and
Miss <-> Mister ("Miss Marple" <-> "Mister Marple", "Miss World" <-> "Mister World"); Mr <->
Mrs come from the word list, where Ms -> Mr is one way (see the word-list README).
"""

from __future__ import annotations

import functools
import re

from cdsbias.cds.edits import Edit, match_case
from cdsbias.cds.languages.base import Language, Skip
from cdsbias.cds.languages.en_analysis import Analysis, Analyzer
from cdsbias.cds.languages.en_names import GivenNames, is_title_before_name
from cdsbias.cds.languages.en_pronouns import her_is_possessive, his_is_independent
from cdsbias.cds.wordlists import WordLists, load_word_sets, load_wordlists, resource_path

# Letters, plus inner apostrophes that are not clitics ('s 'd 'll 're 've 'm 't).
WORD_PATTERN = re.compile(r"[^\W\d_]+(?:['’](?!(?i:s|d|ll|re|ve|m|t)\b)[^\W\d_]+)*")
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
ABBREVIATIONS = frozenset({"mr", "mrs", "ms"})
# How much text after a "her" the pronoun rules may look at (a few words).
_REST_CHARS = 80
# Endings that often mark a gendered noun; the report lists unlisted words with them.
GENDERED_LOOKING = re.compile(
    r"(?:ess|esses|man|men|woman|women|boy|boys|girl|girls|ette|ettes|trix|wife|wives)$"
)
# Frequent words with those endings that are not gendered (en_context_words.txt).
NOT_GENDERED = load_word_sets(resource_path("en_context_words.txt"))["not_gendered"]


class English(Language):
    """Computes English gender-counterfactual edits for texts.

    ``CounterfactualSubstituter`` (cdsbias.cds.engine) is this class.

    Args:
        wordlists: Word and name lists; default the shipped ones (names included).
        names: Whether to swap first names.
        analyzer: Optional ``Analyzer`` (spaCy) whose decisions override the rules.
    """

    code = "en"
    name = "English"
    marker_words = frozenset({"he", "she", "him", "his", "himself", "herself"})
    swap_examples = ("he↔she", "his↔her", "John↔Mary")
    axes = (
        "gender", "race", "religion", "age", "disability", "sexual_orientation",
        "nationality", "physical_appearance", "socioeconomic",
    )  # fmt: skip

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
        self.names = names
        self._given = GivenNames(self.name_map, self.ambiguous_names)

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

    def edits_many(
        self, texts: list[str], *, skipped: list[list[Skip]] | None = None
    ) -> list[list[Edit]]:
        """Returns the edits of several texts, running the analyser in one batch.

        English leaves nothing unresolved (her/his always get a reading), so ``skipped``
        only receives one empty list per text.
        """
        if skipped is not None:
            skipped.extend([] for _ in texts)
        if self.analyzer is None:
            return [self.edits(text) for text in texts]
        analyses = self.analyzer.analyze_many(texts)
        return [self.edits(text, analysis) for text, analysis in zip(texts, analyses, strict=True)]

    def edits(
        self,
        text: str,
        analysis: Analysis | None = None,
        *,
        skipped: list[Skip] | None = None,
    ) -> list[Edit]:
        """Returns the substitutions for one text, sorted by position and non-overlapping.

        Args:
            text: The document.
            analysis: Precomputed analyser output; computed here if an analyser is set and
                this is None.
            skipped: Accepted for the :class:`Language` interface; English never skips.
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
            given_decisions = self._given.decisions(text, tokens, analysis)
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
            elif (lower in word_map or lower in TITLE_MAP) and not self._given.is_part_of_name(
                text, tokens, index
            ):
                if lower in TITLE_MAP and is_title_before_name(text, tokens, index):
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

    def unlisted_words(self, text: str) -> list[str]:
        """Lower-case words with a gendered-looking ending (-ess, -man, -woman, -boy, -girl,
        -ette, -trix, -wife) that no list covers; capitalised ones are mostly surnames
        (Chapman, Goodman) and are not counted."""
        known_words = self.known_words
        return [
            lower
            for lower in WORD_PATTERN.findall(text)
            if lower.islower()
            and len(lower) > 4
            and lower not in known_words
            and lower not in NOT_GENDERED
            and not lower.endswith(("ness", "less"))
            and GENDERED_LOOKING.search(lower)
        ]
