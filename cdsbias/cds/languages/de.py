"""German counterfactual substitution with grammatical agreement.

German gender is grammatical: swapping *Arzt* for *Ärztin* is only right if the article,
adjectives and relative pronouns that agree with it change too (*dem jungen Arzt, der* ->
*der jungen Ärztin, die*). Zmigrod, Mielke, Wallach & Cotterell (2019, ACL, "Counterfactual
Data Augmentation for Mitigating Gender Stereotypes in Languages with Rich Morphology")
showed that naive swapping produces ungrammatical text; this module re-inflects instead
(noun phrases in :mod:`~cdsbias.cds.languages.de_agreement`, pronouns in
:mod:`~cdsbias.cds.languages.de_pronouns`, titles and names in
:mod:`~cdsbias.cds.languages.de_names`, place adjectives in
:mod:`~cdsbias.cds.languages.de_places`, text in capitals in
:mod:`~cdsbias.cds.languages.de_capitals`, words and article words in
:mod:`~cdsbias.cds.languages.de_tokens`, data in :mod:`~cdsbias.cds.languages.de_lexicon`;
docs/cds_german.md).

Units, in text order:

* **Person nouns** (4,566 pairs from the german-nouns lexicon, every case and number:
  *der Arzt / des Arztes / den Ärzten* <-> *die Ärztin / der Ärztin / den Ärztinnen*;
  irregular pairs *Mann/Frau, Vater/Mutter, Herr/Dame, ...*) with their article words,
  adjectives and relative pronouns. A form whose article does not fit is left alone (*die
  Heide*). Gender-neutral nouns (*Person, Mitglied, Kind*), gender-fair forms (*Ärzt*innen,
  ÄrztInnen, Lehrer/innen*) and words that merely contain a gendered one (*Mannschaft*)
  never match: lookups are of whole words, in the lexicon's exact spelling. Compounds the
  lexicon lacks are split at their longest known head (*Busmechaniker*); other words with
  a person suffix take a model pair's paradigm (*Fakturist* like *Polizist*, see
  ``PERSON_SUFFIXES``); adjectival masculines inflect like adjectives (*der Beamte, ein
  Beamter* <-> *die Beamtin*).
* **Nominalised adjectives** (*der Vorsitzende / die Vorsitzende, ein Angestellter / eine
  Angestellte*) in the singular, where the article and the ending tell the gender.
* **Titles**: *Herr Müller* <-> *Frau Müller* (*Herrn* in the oblique cases).
* **First names** (German list of name_pairs.tsv), with the genitive *-s*.
* **Pronouns**: *er -> sie, ihn -> sie, ihm -> ihr*, possessive *sein- <-> ihr-* with every
  ending, and back. *sie* (she / they / formal *Sie*) and *ihr* (her / their / to her /
  you) are resolved from context: capitalised mid-sentence is formal; a finite verb next
  to *sie* (or closing its subordinate clause) gives the number (*sie ist* vs *sie sind*);
  *ihr* before a noun is a possessive, after a dative preposition or an earlier subject a
  dative, otherwise the plural *you*. The referent is the nearest earlier candidate: a
  person noun, a name or a resolved pronoun swaps; a non-person noun phrase of matching
  gender (*die Stadt ... ihre Einwohner*, *das Kind ... sein*) keeps the pronoun. When
  nothing decides, the pronoun is left unchanged and reported as a :class:`Skip`.

``German(agreement=False)`` is the naive variant (Zmigrod et al.'s baseline): nouns and
pronouns swap word for word, nothing that agrees with them is re-inflected, and *sie* /
*ihr* are not disambiguated.
"""

from __future__ import annotations

import functools
import re

from cdsbias.cds.engine import Edit
from cdsbias.cds.languages.base import LETTERS, Language, Skip
from cdsbias.cds.languages.de_agreement import (
    analyse_noun_phrase,
    declension,
    reinflect,
    relative_edit,
    sex_adjective,
)
from cdsbias.cds.languages.de_capitals import CAPITALS_RUN, edits_with_capitals
from cdsbias.cds.languages.de_lexicon import (
    ADJECTIVAL_STEMS,
    CASES,
    DAT_PREPOSITIONS,
    GENDERED_ADJECTIVE_FORMS,
    SUFFIX_STEM_LETTERS,
    NounForm,
    adjective_ending,
    load_german_lexicon,
)
from cdsbias.cds.languages.de_names import TITLE_WORDS, TITLES, GermanNames
from cdsbias.cds.languages.de_places import (
    PLACE_SKIP,
    attributive,
    is_place_adjective,
    predicative_about_a_thing,
)
from cdsbias.cds.languages.de_pronouns import PRONOUNS, GermanPronouns
from cdsbias.cds.languages.de_tokens import Tokens

WORD = LETTERS
_WORDS_AND_GAPS = re.compile(f"({WORD.pattern})")
_FAIR_MARKS = frozenset("*:_/")
_ADJECTIVE_ENDINGS = ("e", "en", "em", "er", "es")
_SINGULAR_SLOTS = frozenset(("sg", case) for case in CASES)
_PLAIN_WORDS_LIMIT = 1 << 18
# Person-noun forms that are also adjective forms (jung: junge, jungen).
_ADJECTIVE_LOOKALIKES = frozenset(("Junge", "Jungen"))
_ADJECTIVAL_FORMS = {
    stem + ending: stem for stem in ADJECTIVAL_STEMS for ending in _ADJECTIVE_ENDINGS
}


def _adjectival_target(stem: str, kind: str) -> dict[tuple[str, str], str]:
    """The forms of an adjectival masculine (*Beamt-*) after an article of ``kind``
    (weak / mixed / strong): *der Beamte*, *ein Beamter*, *die Beamten*, *Beamte*."""
    return {
        (number, case): stem
        + adjective_ending(kind, ("m" if number == "sg" else "x", number, case))
        for number in ("sg", "pl")
        for case in CASES
    }


class German(GermanNames, GermanPronouns, Language):
    """German gender counterfactuals with agreement (see the module docstring).

    Args:
        names: Whether first names are swapped.
        agreement: False for the naive variant (no re-inflection, no disambiguation).
    """

    code = "de"
    name = "German"
    #: German-only third-person pronouns, for the registry's corpus-language check ("er"
    #: is left out: it is the Danish "is").
    marker_words = frozenset({"sie", "ihn", "ihm", "ihr", "ihre", "seine", "seinen", "seinem"})

    def __init__(self, *, names: bool = True, agreement: bool = True) -> None:
        super().__init__(names=names)
        self.agreement = agreement
        self.lexicon = load_german_lexicon(names)
        # Per-instance cache: a corpus repeats its compounds.
        self._compounds = functools.lru_cache(maxsize=1 << 16)(self._find_compound)
        self._compound_targets: dict[tuple[str, int, str], dict] = {}
        self._plain_words: set[str] = set()  # words known to start no unit
        self._triggers = frozenset(
            set(self.lexicon.noun_forms)
            | set(self.lexicon.name_map)
            | {name + "s" for name in self.lexicon.name_map if not name.endswith(("s", "x", "z"))}
            | PRONOUNS
            | {word.capitalize() for word in PRONOUNS}
            | set(_ADJECTIVAL_FORMS)
            | set(GENDERED_ADJECTIVE_FORMS)
            | {form.capitalize() for form in GENDERED_ADJECTIVE_FORMS}
        )

    def _split_compound(self, word: str) -> tuple[str, str] | None:
        """(prefix, person noun) for a compound the lexicon lacks, longest head first."""
        return self._compounds(word)

    def _find_compound(self, word: str) -> tuple[str, str] | None:
        heads = self.lexicon.heads
        for cut in range(3, len(word) - 4):
            head = heads.get(word[cut:])
            if head is not None:
                return word[:cut], head
        # A derived person noun the lexicon lacks (Fakturist, Phlebologin): its suffix
        # form, longest first, unless the word ends like a known non-person (Listen).
        for cut in range(SUFFIX_STEM_LETTERS, len(word) - 2):
            suffix = word[cut:]
            if suffix in self.lexicon.suffixes:
                lower = word.lower()
                if lower in self.lexicon.suffix_exception_words or any(
                    lower.endswith(end) for end in self.lexicon.suffix_exceptions
                ):
                    return None
                return word[:cut], suffix
        return None

    @property
    def known_words(self) -> frozenset[str]:
        return frozenset(
            {form.lower() for form in self.lexicon.noun_forms}
            | {name.lower() for name in self.lexicon.name_map}
            | {form.lower() for form in _ADJECTIVAL_FORMS}
            | PRONOUNS
        )

    def edits(self, text: str, *, skipped: list[Skip] | None = None) -> list[Edit]:
        parts = _WORDS_AND_GAPS.split(text)  # one pass: gaps and words alternate
        # The common case: no word in capitals (one C-level pass over the words), so no
        # sentence in capitals either.
        if not any(map(str.isupper, parts[1::2])) or CAPITALS_RUN.search(text) is None:
            return self._edits(text, skipped, parts)
        names = self.lexicon.name_map
        return edits_with_capitals(text, self._edits, self._capitalised, names, skipped)

    def _capitalised(self, word: str) -> bool:
        """A word (capitalised) that names a person, for re-casing text in capitals."""
        names = self.lexicon.name_map
        return word in _ADJECTIVAL_FORMS or word[:-1] in names or self._is_person(word)

    def _edits(
        self, text: str, skipped: list[Skip] | None, parts: list[str] | None = None
    ) -> list[Edit]:
        if parts is None:
            parts = _WORDS_AND_GAPS.split(text)
        words = parts[1::2]
        triggers = self._triggers
        # The words that can start a unit: a trigger word (one set lookup), or a long
        # capitalised compound with a known person-noun head. The test runs on the
        # document's distinct words, and words once found to be neither are remembered.
        unique = set(words)
        found = unique & triggers
        # (Binary "-" iterates over the small left set; "-=" would walk the memory.)
        unknown = unique - found - self._plain_words
        if unknown:
            split = self._compounds
            compounds = {w for w in unknown if len(w) >= 8 and w[0].isupper() and split(w)}
            found |= compounds
            if len(self._plain_words) > _PLAIN_WORDS_LIMIT:
                self._plain_words.clear()  # a bound on memory over a long corpus
            self._plain_words |= unknown - compounds
        if not found:
            return []  # no offsets needed
        candidates = [i for i, word in enumerate(words) if word in found]
        tokens = Tokens(text, parts)
        planned: dict[int, Edit] = {}
        refs: dict[int, str] = {}  # word -> mp / fp / pl: persons to refer back to
        possessive_slots: dict[int, tuple[str, str, str]] = {}
        surnames: set[int] = set()
        for i in candidates:
            if i in planned or i in surnames or tokens.lowers[i] in GENDERED_ADJECTIVE_FORMS:
                continue
            if words[i] in triggers:
                self._nominal(tokens, i, planned, refs, possessive_slots, surnames, skipped)
            else:
                self._noun(tokens, i, planned, refs, possessive_slots, skipped)
        for i in candidates:
            # männlich/weiblich outside a swapped phrase ("ist männlich"): the stem alone;
            # after the nouns, whose phrases re-inflect the ones they contain.
            if i not in planned and tokens.lowers[i] in GENDERED_ADJECTIVE_FORMS:
                planned[i] = tokens.edit(i, sex_adjective(tokens.lowers[i]), "adjective")
        for i, lower in enumerate(tokens.lowers):
            if lower in PRONOUNS and i not in planned:
                edit = self._pronoun(tokens, i, refs, possessive_slots, skipped)
                if edit is not None:
                    planned[i] = edit
        return [planned[i] for i in sorted(planned)]

    # Nouns, titles and names -------------------------------------------------------------

    def _nominal(self, tokens, i, planned, refs, possessive_slots, surnames, skipped) -> None:
        word = tokens.words[i]
        text = tokens.text
        start, end = tokens.starts[i], tokens.ends[i]
        if text[end : end + 1] in _FAIR_MARKS or text[start - 1 : start] in _FAIR_MARKS:
            return  # part of a gender-fair form: Ärzt*innen, Lehrer/innen
        if word in TITLE_WORDS and self._title(tokens, i):
            if word == "Frau":
                nominative = tokens.clause_start(i) or tokens.lower(i - 1) == "und"
                replacement = "Herr" if nominative else "Herrn"
            else:
                replacement = TITLES[word]
            planned[i] = tokens.edit(i, replacement, "title")
            refs[i] = "mp" if word != "Frau" else "fp"
            surnames.add(i + 1)
            return
        if word in _ADJECTIVAL_FORMS:
            self._adjectival(tokens, i, planned, refs, possessive_slots)
        elif word in self.lexicon.noun_forms:
            self._noun(tokens, i, planned, refs, possessive_slots, skipped)
        elif self.names:
            self._name(tokens, i, planned, refs, surnames)

    def _is_person(self, word: str) -> bool:
        """A capitalised word names a person: a person noun, a compound of one, a name."""
        lexicon = self.lexicon
        if word in lexicon.noun_forms or word in lexicon.name_map:
            return True
        return len(word) >= 8 and self._split_compound(word) is not None

    def _place_adjective(self, tokens: Tokens, i: int) -> bool:
        """Word ``i`` is a place adjective here, not a person noun (module de_places)."""
        word = tokens.words[i]
        place = is_place_adjective(word)
        if not place and word in self.lexicon.noun_forms:
            return False
        if attributive(tokens, i, self.lexicon.name_map):
            return True
        return place and predicative_about_a_thing(tokens, i, self._is_person)

    def _noun(self, tokens, i, planned, refs, possessive_slots, skipped=None) -> None:
        previous = tokens.words[i - 1] if i > 0 else ""
        if previous in self.lexicon.name_gender and tokens.adjacent(i):
            return  # a surname: "Thomas Mann"
        word = tokens.words[i]
        if (
            word in _ADJECTIVE_LOOKALIKES
            and tokens.sentence_start(i)
            and attributive(tokens, i, {})
        ):
            return  # "Junge Leute tanzen": the adjective jung, capitalised at the start
        if word.endswith("er") and self._place_adjective(tokens, i):
            self._skip(tokens, i, PLACE_SKIP, skipped)
            return  # "die Frankfurter Börse", "der Senat ist Berliner"
        prefix, head = "", word
        lexicon = self.lexicon
        if word not in lexicon.noun_forms:
            prefix, head = self._split_compound(word)  # type: ignore[misc]
        for reading in lexicon.noun_forms.get(head) or lexicon.suffixes[head]:
            other = "f" if reading.gender == "m" else "m"
            target = lexicon.pairs[reading.pair][other]
            if prefix:
                key = (prefix, reading.pair, other)
                if key not in self._compound_targets:
                    self._compound_targets[key] = {
                        slot: prefix + form[0].lower() + form[1:] for slot, form in target.items()
                    }
                target = self._compound_targets[key]
            stem = lexicon.adjectival_stems.get(reading.pair)
            if stem is None:
                phrase = analyse_noun_phrase(tokens, i, reading, lexicon.name_map, target=target)
            else:  # der Beamte / ein Beamter: the masculine's ending must fit like an adjective's
                inflected = reading.gender == "m"
                phrase = analyse_noun_phrase(
                    tokens, i, reading, lexicon.name_map, inflected=inflected
                )
            if phrase is None:
                continue
            if stem is not None and other == "m":
                stem = prefix + stem[0].lower() + stem[1:] if prefix else stem
                target = _adjectival_target(stem, declension(tokens, phrase))
            if not self.agreement:
                form = target.get(phrase.slot[1:])
                if form is not None:
                    planned[i] = tokens.edit(i, form, "noun")
                return
            if other == "f" and reading.pair in lexicon.neuter_pairs:
                other = "n"  # der Junge -> das Mädchen: the article words become neuter
            self._apply_phrase(tokens, phrase, target, other, planned, refs, possessive_slots)
            return

    def _apply_phrase(self, tokens, phrase, target, other, planned, refs, possessive_slots):
        """Plans the edits that give ``phrase`` the noun ``target`` of gender ``other``."""
        if not self.agreement:  # the naive variant: the noun alone
            form = target.get(phrase.slot[1:])
            if form is not None:
                planned[phrase.noun] = tokens.edit(phrase.noun, form, "noun")
            return
        result = reinflect(tokens, phrase, target, other)
        if result is None:
            return
        indexed, slots = result
        if not planned.keys().isdisjoint(indexed):
            if any(
                k in planned and planned[k].replacement != e.replacement for k, e in indexed.items()
            ):
                # An article or adjective another phrase already changed otherwise (the
                # same change is fine: "Diese Frau, die staatlich geprüfte ..." makes "die"
                # a "der" both as a relative pronoun and as the apposition's article).
                return
            indexed = {k: e for k, e in indexed.items() if k not in planned}
        if not planned.keys().isdisjoint(slots):
            return
        planned.update(indexed)
        possessive_slots.update(slots)
        # For a bare second conjunct ("mit Brüdern und Schwestern"): its case.
        tokens.memo.setdefault("phrase_slots", {})[phrase.noun] = phrase.slot
        relative = relative_edit(tokens, phrase, other, self.lexicon.name_map)
        if relative is not None and tokens.index(relative.start) not in planned:
            planned[tokens.index(relative.start)] = relative
        refs[phrase.noun] = "pl" if phrase.slot[1] == "pl" else phrase.reading.grammatical + "p"

    def _adjectival(self, tokens, i, planned, refs, possessive_slots) -> None:
        """A nominalised adjective (der Vorsitzende, einem Angestellten): its own ending
        and its article give the gender; only a singular one is swapped."""
        word = tokens.words[i]
        following = tokens.words[i + 1] if i + 1 < len(tokens.words) else ""
        if following[:1].isupper() and tokens.adjacent(i + 1):
            return  # an adjective before its noun: "Bekannte Künstler"
        stem = _ADJECTIVAL_FORMS[word]
        names = self.lexicon.name_map
        phrases = []
        for gender in ("m", "f"):
            reading = NounForm(-1, gender, _SINGULAR_SLOTS)
            phrase = analyse_noun_phrase(tokens, i, reading, names, inflected=True)
            if phrase is not None:
                phrases.append(phrase)
        if len(phrases) == 2 and phrases[0].article is None:
            # Bare "Angestellter": masculine nominative, not a feminine dative.
            phrases = [phrase for phrase in phrases if phrase.slot[2] == "nom"]
        if len(phrases) != 1:
            return  # plural, or the article cannot tell
        if phrases[0].article is None and not word.endswith(("er", "em")):
            return  # bare "Abgeordnete(n)" is mostly plural; "ist Angestellter" is not
        phrase = phrases[0]
        start = phrase.start
        after_dative = tokens.adjacent(start) and tokens.lower(start - 1) in DAT_PREPOSITIONS
        if after_dative and phrase.slot[2] != "dat":
            return  # "mit den Abgeordneten": no singular fits, so a plural
        other = "f" if phrase.reading.gender == "m" else "m"
        kind = declension(tokens, phrase)
        target = {
            (number, case): stem + adjective_ending(kind, (other, number, case))
            for number, case in _SINGULAR_SLOTS
        }
        self._apply_phrase(tokens, phrase, target, other, planned, refs, possessive_slots)
