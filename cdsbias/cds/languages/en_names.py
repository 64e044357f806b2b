"""English given names (rule-based; with spaCy, NER overrides the rules where it tags an
entity, see ``GivenNames._ner_decisions`` and cdsbias.cds.spacy_analysis):
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
"""

from __future__ import annotations

from cdsbias.cds.languages.en_analysis import Analysis
from cdsbias.cds.wordlists import load_word_sets, resource_path

# The context words are data: en_context_words.txt, one [section] each.
_WORDS = load_word_sets(resource_path("en_context_words.txt"))
#: Function words that are capitalised only because they start a sentence.
SENTENCE_STARTERS = _WORDS["sentence_starters"]
#: Titles before which a lone name is a surname ("Mr. Thomas", "Senator Warren").
SURNAME_TITLES = _WORDS["surname_titles"]
#: Titles that take a given name ("Sir Thomas", "Queen Mary", "Father Brown" aside).
GIVEN_NAME_TITLES = _WORDS["given_name_titles"]
#: A name right before one of these is part of a place or organisation name.
PLACE_HEADS = _WORDS["place_heads"]
#: Before a name these make a place ("Port Phillip", "Mount Vernon", "Lake Louise"): the
#: name is neither a given name nor evidence that it is a surname elsewhere in the document.
PLACE_PREFIXES = _WORDS["place_prefixes"]
_ARTICLES = frozenset({"the", "a", "an"})
_SAINTS = frozenset({"st", "saint", "ste"})
_SENTENCE_END = frozenset(".!?\n")


def _is_title_case(word: str) -> bool:
    return word[:1].isupper() and word[1:].islower()


class GivenNames:
    """Decides which name-list tokens of a text are given names.

    Args:
        name_map: Given name (capitalised) -> substitute given name.
        ambiguous_names: Given name -> ``"word"`` or ``"proper"``.
    """

    def __init__(self, name_map: dict[str, str], ambiguous_names: dict[str, str]) -> None:
        self.name_map = name_map
        self.ambiguous_names = ambiguous_names

    def is_part_of_name(self, text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
        """A capitalised gendered word right after a given name is a surname ("Stephen King")."""
        word = tokens[index][2]
        if not word[:1].isupper() or index == 0:
            return False
        _, previous_end, previous = tokens[index - 1]
        gap = text[previous_end : tokens[index][0]]
        if gap == " " and previous in self.name_map:
            return True
        return len(previous) == 1 and previous.isupper() and gap == ". "

    def decisions(
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
            verdict = self._rule_decision(text, tokens, index)
            rule_decisions[index] = verdict
            if verdict == "surname":
                surname_evidence.add(tokens[index][2])
        if analysis is not None and analysis.given_names is not None:
            return self._ner_decisions(tokens, candidates, rule_decisions, analysis)
        decisions = {}
        for index in candidates:
            start, _, word = tokens[index]
            verdict = rule_decisions[index]
            decisions[start] = verdict == "full" or (
                verdict == "given" and word not in surname_evidence
            )
        return decisions

    def _ner_decisions(
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

    def _rule_decision(self, text: str, tokens: list[tuple[int, int, str]], index: int) -> str:
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


def is_title_before_name(text: str, tokens: list[tuple[int, int, str]], index: int) -> bool:
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
