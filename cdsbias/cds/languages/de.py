"""German counterfactual substitution with grammatical agreement.

German gender is grammatical: swapping *Arzt* for *Ärztin* is only right if the article,
adjectives and relative pronouns that agree with it change too (*dem jungen Arzt, der* ->
*der jungen Ärztin, die*). Zmigrod, Mielke, Wallach & Cotterell (2019, ACL, "Counterfactual
Data Augmentation for Mitigating Gender Stereotypes in Languages with Rich Morphology")
showed that naive swapping produces ungrammatical text; this module re-inflects instead
(noun phrases in :mod:`cdsbias.cds.languages.de_agreement`, data in
:mod:`cdsbias.cds.languages.de_lexicon`).

Units, in text order:

* **Person nouns** (4,567 pairs from the german-nouns lexicon, every case and number:
  *der Arzt / des Arztes / den Ärzten* <-> *die Ärztin / der Ärztin / den Ärztinnen*;
  irregular pairs *Mann/Frau, Vater/Mutter, Herr/Dame, ...*) with their article words,
  adjectives and relative pronouns. A form whose article does not fit is left alone (*die
  Heide*). Gender-neutral nouns (*Person, Mitglied, Kind*), gender-fair forms (*Ärzt*innen,
  ÄrztInnen, Lehrer/innen*) and words that merely contain a gendered one (*Mannschaft*)
  never match: lookups are of whole words, in the lexicon's exact spelling.
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
from cdsbias.cds.languages.base import Language, Skip
from cdsbias.cds.languages.de_agreement import (
    Tokens,
    analyse_noun_phrase,
    has_subject_before,
    parse_article,
    reinflect,
    relative_edit,
)
from cdsbias.cds.languages.de_lexicon import (
    ACC_PREPOSITIONS,
    DAT_PREPOSITIONS,
    DEGREE_ADVERBS,
    EIN_FORM,
    NOT_VERBS,
    PLURAL_VERBS,
    PREPOSITIONS,
    SINGULAR_VERBS,
    SUBORDINATORS,
    TWO_WAY_PREPOSITIONS,
    load_german_lexicon,
    word_set,
)

WORD = re.compile(r"[^\W\d_]+")
_FAIR_MARKS = frozenset("*:_/")
_MALE_TO_FEMALE = {"er": "sie", "ihn": "sie", "ihm": "ihr"}
_FEMALE = {"nom": "er", "acc": "ihn", "dat": "ihm"}
_POSSESSIVE_ENDINGS = ("", "e", "en", "em", "es", "er")
_ADJECTIVE_ENDINGS = ("e", "en", "em", "er", "es")
_POSSESSIVES = {stem + end for stem in ("sein", "ihr") for end in _POSSESSIVE_ENDINGS}
PRONOUNS = frozenset({"er", "ihn", "ihm", "sie"} | _POSSESSIVES)
TITLES = {"Herr": "Frau", "Herrn": "Frau"}
_TITLES_BEFORE_SURNAME = word_set("Herr Herrn Frau Dr Prof Professor Professorin")
_OBJECT_PREPOSITIONS = ACC_PREPOSITIONS | TWO_WAY_PREPOSITIONS
_WINDOW = 60  # words searched back for a referent


def verb_number(word: str) -> str | None:
    """'sg' / 'pl' if ``word`` looks like a 3rd-person finite verb of that number."""
    if word in SINGULAR_VERBS:
        return "sg"
    if word in PLURAL_VERBS:
        return "pl"
    if not word.islower() or word in NOT_VERBS or len(word) < 3:
        return None
    if word.endswith("en"):
        return "pl"
    if word.endswith(("t", "te")):
        return "sg"
    return None


class German(Language):
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
        self._triggers = frozenset(
            set(self.lexicon.noun_forms)
            | set(self.lexicon.name_map)
            | {name + "s" for name in self.lexicon.name_map if not name.endswith(("s", "x", "z"))}
            | PRONOUNS
            | {word.capitalize() for word in PRONOUNS}
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
        return None

    @property
    def known_words(self) -> frozenset[str]:
        return frozenset(
            {form.lower() for form in self.lexicon.noun_forms}
            | {name.lower() for name in self.lexicon.name_map}
            | PRONOUNS
        )

    def edits(self, text: str, *, skipped: list[Skip] | None = None) -> list[Edit]:
        words = WORD.findall(text)
        triggers = self._triggers
        if not any(word in triggers for word in words) and not any(
            len(word) >= 8 and word[0].isupper() and self._split_compound(word) for word in words
        ):
            return []  # most documents of a corpus: no offsets needed
        tokens = Tokens(text, WORD)
        planned: dict[int, Edit] = {}
        refs: dict[int, str] = {}  # word -> mp / fp / pl: persons to refer back to
        possessive_slots: dict[int, tuple[str, str, str]] = {}
        surnames: set[int] = set()
        for i, word in enumerate(tokens.words):
            if i in planned or i in surnames:
                continue
            if word in triggers:
                self._nominal(tokens, i, planned, refs, possessive_slots, surnames)
            elif len(word) >= 8 and word[0].isupper() and self._split_compound(word):
                self._noun(tokens, i, planned, refs, possessive_slots)
        for i, word in enumerate(tokens.words):
            if i not in planned and word.lower() in PRONOUNS:
                edit = self._pronoun(tokens, i, refs, possessive_slots, skipped)
                if edit is not None:
                    planned[i] = edit
        return [planned[i] for i in sorted(planned)]

    # Nouns, titles and names -------------------------------------------------------------

    def _nominal(self, tokens, i, planned, refs, possessive_slots, surnames) -> None:
        word = tokens.words[i]
        text = tokens.text
        start, end = tokens.starts[i], tokens.ends[i]
        if text[end : end + 1] in _FAIR_MARKS or text[start - 1 : start] in _FAIR_MARKS:
            return  # part of a gender-fair form: Ärzt*innen, Lehrer/innen
        following = tokens.words[i + 1] if i + 1 < len(tokens.words) else ""
        title_next = following[:1].isupper() and tokens.adjacent(i + 1)
        if word in ("Herr", "Herrn", "Frau") and title_next and not self._after_article(tokens, i):
            if word == "Frau":
                nominative = tokens.clause_start(i) or tokens.lower(i - 1) == "und"
                replacement = "Herr" if nominative else "Herrn"
            else:
                replacement = TITLES[word]
            planned[i] = tokens.edit(i, replacement, "title")
            refs[i] = "mp" if word != "Frau" else "fp"
            surnames.add(i + 1)
            return
        if word in self.lexicon.noun_forms:
            self._noun(tokens, i, planned, refs, possessive_slots)
        elif self.names:
            self._name(tokens, i, planned, refs, surnames)

    def _after_article(self, tokens: Tokens, i: int) -> bool:
        return tokens.adjacent(i) and parse_article(tokens.lower(i - 1)) is not None

    def _noun(self, tokens, i, planned, refs, possessive_slots) -> None:
        previous = tokens.words[i - 1] if i > 0 else ""
        if previous in self.lexicon.name_gender and tokens.adjacent(i):
            return  # a surname: "Thomas Mann"
        word = tokens.words[i]
        prefix, head = "", word
        if word not in self.lexicon.noun_forms:
            prefix, head = self._split_compound(word)  # type: ignore[misc]
        for reading in self.lexicon.noun_forms[head]:
            phrase = analyse_noun_phrase(tokens, i, reading, self.lexicon.name_map)
            if phrase is None:
                continue
            other = "f" if reading.gender == "m" else "m"
            target = self.lexicon.pairs[reading.pair][other]
            if prefix:
                target = {
                    slot: prefix + form[0].lower() + form[1:] for slot, form in target.items()
                }
            if not self.agreement:
                form = target.get(phrase.slot[1:])
                if form is not None:
                    planned[i] = tokens.edit(i, form, "noun")
                return
            result = reinflect(tokens, phrase, target, other)
            if result is None:
                return
            edits, slots = result
            indexed = {tokens.index(edit.start): edit for edit in edits}
            if any(index in planned for index in indexed) or any(k in planned for k in slots):
                return  # an article or adjective another phrase already changed
            planned.update(indexed)
            possessive_slots.update(slots)
            relative = relative_edit(tokens, phrase, other, self.lexicon.name_map)
            if relative is not None and tokens.index(relative.start) not in planned:
                planned[tokens.index(relative.start)] = relative
            refs[i] = "pl" if phrase.slot[1] == "pl" else reading.gender + "p"
            return

    def _name(self, tokens, i, planned, refs, surnames) -> None:
        word = tokens.words[i]
        names = self.lexicon.name_map
        base, suffix = (word, "") if word in names else (word[:-1], "s")
        if base not in names:
            return
        previous = tokens.words[i - 1] if i > 0 and tokens.adjacent(i) else ""
        if previous in names or previous.rstrip(".") in _TITLES_BEFORE_SURNAME:
            return  # a surname or a second given name read as one: "Anna Peters"
        name_class = self.lexicon.ambiguous_names.get(base, "")
        if self._after_article(tokens, i) and "," not in tokens.gap(i - 1):
            # ", der Maria behandelt" is a relative pronoun, not an article
            return  # "der Wolf"; "die Maria" (dialect) would need its article changed too
        word_like = previous.lower() in PREPOSITIONS or (
            previous.islower() and previous.endswith(_ADJECTIVE_ENDINGS)
        )
        if name_class and word_like:
            return  # "in Achim", "seinem neuen Roman": a place or a noun, not a name
        following = tokens.words[i + 1] if i + 1 < len(tokens.words) else ""
        if name_class == "proper" and not (following[:1].isupper() and tokens.adjacent(i + 1)):
            return
        planned[i] = tokens.edit(i, names[base] + suffix, "name")
        refs[i] = self.lexicon.name_gender[base] + "p"
        if following[:1].isupper() and tokens.adjacent(i + 1):
            surnames.add(i + 1)

    # Pronouns ---------------------------------------------------------------------------

    def _pronoun(self, tokens, i, refs, possessive_slots, skipped) -> Edit | None:
        word = tokens.words[i]
        lower = word.lower()
        if lower in _MALE_TO_FEMALE:
            if self.agreement and self._referent(tokens, i, refs, "m") == "mx":
                return None  # "der Tisch ... er": a thing
            refs[i] = "mp"
            return tokens.edit(i, _MALE_TO_FEMALE[lower], "pronoun")
        formal = word[:1].isupper() and not tokens.sentence_start(i)
        if lower.startswith("sein"):
            return self._sein(tokens, i, refs, possessive_slots)
        if formal and lower.startswith(("sie", "ihr")):
            return None  # Sie / Ihr / Ihre mid-sentence: formal address
        if not self.agreement:
            return tokens.edit(i, "er" if lower == "sie" else "sein" + lower[3:], "pronoun")
        if lower == "sie":
            return self._sie(tokens, i, refs, skipped)
        return self._ihr(tokens, i, refs, possessive_slots, skipped)

    def _sein(self, tokens, i, refs, possessive_slots) -> Edit | None:
        lower = tokens.lower(i)
        if lower == "sein" and not self._before_noun(tokens, i):
            return None  # the verb "sein"
        if self.agreement and self._referent(tokens, i, refs, "mn") in ("mx", "nx"):
            return self._possessive(tokens, i, "sein", possessive_slots)
        return self._possessive(tokens, i, "ihr", possessive_slots)

    def _possessive(self, tokens, i, stem, possessive_slots) -> Edit | None:
        ending = tokens.lower(i)[4 if tokens.lower(i).startswith("sein") else 3 :]
        if i in possessive_slots:
            ending = EIN_FORM[possessive_slots[i]]
        new = stem + ending
        return tokens.edit(i, new, "possessive") if new != tokens.lower(i) else None

    def _before_noun(self, tokens: Tokens, i: int) -> bool:
        """Word ``i`` is followed by [adverbs/adjectives] and a capitalised noun."""
        j = i + 1
        while j < len(tokens.words) and tokens.adjacent(j):
            word = tokens.words[j]
            if word[:1].isupper():
                return True
            if parse_article(word) is not None:
                return False  # "ihr eine Gehaltserhöhung": ihr is the dative object
            if not (word in DEGREE_ADVERBS or word.endswith(_ADJECTIVE_ENDINGS)):
                return False
            j += 1
        return False

    def _sie(self, tokens, i, refs, skipped) -> Edit | None:
        number, role = self._subject_number(tokens, i)
        if number == "pl":
            refs[i] = "pl"
            return None
        referent = self._referent(tokens, i, refs, "f" if number == "sg" else "f?")
        if referent in ("fx", "pl"):
            refs[i] = referent
            return None
        if referent is None and number is None:
            self._skip(tokens, i, "ambiguous sie", skipped)
            return None
        refs[i] = "fp"
        case = "nom" if role == "subj" else "acc" if role == "obj" else self._nom_or_acc(tokens, i)
        return tokens.edit(i, _FEMALE[case], "pronoun")

    def _ihr(self, tokens, i, refs, possessive_slots, skipped) -> Edit | None:
        lower = tokens.lower(i)
        if lower == "ihr" and not self._before_noun(tokens, i):
            dative = tokens.lower(i - 1) in DAT_PREPOSITIONS or has_subject_before(
                tokens, i, self.lexicon.name_map
            )
            if not dative:
                return None  # "ihr seid": plural you
            if self._referent(tokens, i, refs, "f") == "fx":
                return None
            return tokens.edit(i, "ihm", "pronoun")
        referent = self._referent(tokens, i, refs, "f?")
        if referent is None:
            self._skip(tokens, i, "ambiguous ihr", skipped)
        if referent != "fp":
            # Her/their of a non-person, or unresolved: the stem stays; the ending still
            # follows a swapped noun ("ihr Arzt" -> "ihre Ärztin").
            return self._possessive(tokens, i, "ihr", possessive_slots)
        return self._possessive(tokens, i, "sein", possessive_slots)

    def _subject_number(self, tokens: Tokens, i: int) -> tuple[str | None, str | None]:
        """(number, role) of sie at ``i`` from the verb it agrees with."""
        names = self.lexicon.name_map
        previous = tokens.lower(i - 1) if tokens.adjacent(i) else ""
        if previous in _OBJECT_PREPOSITIONS:
            return None, "obj"
        if has_subject_before(tokens, i, names):
            return None, "obj"
        nxt = i + 1
        if nxt < len(tokens.words) and tokens.gap(nxt).strip() == "," and tokens.clause_start(i):
            # "Sie, die Ärztin, hatte ...": the verb follows the apposition's closing comma.
            nxt += 1
            while nxt < len(tokens.words) and not tokens.clause_start(nxt):
                nxt += 1
            if nxt < len(tokens.words) and parse_article(tokens.lower(i + 1)) is not None:
                number = verb_number(tokens.lower(nxt)) if tokens.words[nxt].islower() else None
                if number:
                    return number, "subj"
            nxt = len(tokens.words)
        following = tokens.words[nxt] if nxt < len(tokens.words) and tokens.adjacent(nxt) else ""
        if tokens.clause_start(i) and following.islower() and following not in NOT_VERBS:
            # Main clause, verb second: the word after a clause-initial sie is its verb
            # ("Sie vergaß", "Sie gingen").
            plural = following.endswith("en") or following in PLURAL_VERBS
            return ("pl" if plural else "sg"), "subj"
        number = verb_number(following) or (
            verb_number(previous) if previous and not tokens.clause_start(i) else None
        )
        if number:
            return number, "subj"
        opener = i
        while opener > 0 and not tokens.clause_start(opener):
            opener -= 1
        if tokens.lower(opener) in SUBORDINATORS or tokens.lower(opener) in ("der", "die"):
            last = i + 1
            while last + 1 < len(tokens.words) and not tokens.clause_start(last + 1):
                last += 1
            if last < len(tokens.words):
                number = verb_number(tokens.lower(last))
                if number:
                    return number, "subj"
        return None, None

    def _nom_or_acc(self, tokens: Tokens, i: int) -> str:
        if tokens.clause_start(i) or tokens.lower(i - 1) == "und":
            return "nom"
        return "acc"

    def _referent(self, tokens: Tokens, i: int, refs: dict[int, str], want: str) -> str | None:
        """Nearest earlier referent compatible with a pronoun of ``want`` gender.

        ``want``: ``m`` (er/ihn/ihm), ``mn`` (sein-: masculine or neuter), ``f``
        (singular sie/ihr), ``f?`` (sie/ihr of unknown number). Returns ``mp``/``fp`` (a
        person), ``mx``/``nx``/``fx`` (a non-person noun phrase that can be masculine /
        is neuter / feminine), ``pl`` (plural) or None.
        """
        accept = {
            "m": ("mp", "mx"),
            "mn": ("mp", "mx", "nx"),
            "f": ("fp", "fx"),
            "f?": ("fp", "fx", "pl"),
        }[want]
        for j in range(i - 1, max(-1, i - _WINDOW), -1):
            # A possessive right after a noun is its attribute and cannot refer to it:
            # in "das Auto seines Nachbarn", "seines" is not the car's.
            attribute = j == i - 1 and tokens.adjacent(i)
            kind = refs.get(j) or (None if attribute else self._non_person(tokens, j))
            if kind in accept:
                return kind
        return None

    def _non_person(self, tokens: Tokens, j: int) -> str | None:
        """``mx``/``fx`` if word ``j`` heads a non-person noun phrase outside a PP."""
        word = tokens.words[j]
        if not word[:1].isupper() or tokens.sentence_start(j) or word in self.lexicon.name_map:
            return None
        k = j - 1
        while k >= 0 and tokens.adjacent(k + 1):
            if not (tokens.words[k].islower() or tokens.sentence_start(k)):
                return None
            parsed = parse_article(tokens.lower(k))
            if parsed is not None:
                if tokens.adjacent(k) and tokens.lower(k - 1) in PREPOSITIONS:
                    return None
                genders = {slot[0] for slot in parsed[2]}
                if genders == {"n"}:
                    return "nx"  # "das Urteil": a referent for sein, never for er
                if tokens.lower(k) == "der" or genders <= {"m", "n"}:
                    return "mx"
                return "fx" if genders <= {"f", "x"} else None
            k -= 1
        return None

    def _skip(self, tokens: Tokens, i: int, reason: str, skipped: list[Skip] | None) -> None:
        if skipped is not None:
            skipped.append(Skip(tokens.starts[i], tokens.ends[i], tokens.words[i], reason))
