"""German pronouns: er/ihn/ihm, sein-/ihr-, and the sie/ihr ambiguity resolved from context.

*er -> sie, ihn -> sie, ihm -> ihr*; possessive *sein- <-> ihr-* with every ending (the ending
follows a swapped noun: *seine Tochter -> ihr Sohn*). *sie* (she / they / formal *Sie*) and
*ihr* (her / their / to her / you) are resolved from context: capitalised mid-sentence is
the formal address; the finite verb gives *sie*'s number (verb second, after an
apposition, before it, or closing its subordinate clause); *ihr* before a noun is a
possessive, after a dative preposition or a subject the dative, otherwise the plural
*you*. The referent is the nearest earlier candidate: a person noun, a name or a resolved
pronoun swaps; a non-person noun phrase of a matching gender keeps the pronoun. When
nothing decides, the pronoun is left unchanged and reported as a :class:`Skip`
(docs/cds_german.md).
"""

from __future__ import annotations

from cdsbias.cds.engine import Edit
from cdsbias.cds.languages.base import Skip
from cdsbias.cds.languages.de_case import has_subject_before
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
    word_set,
)
from cdsbias.cds.languages.de_places import is_place_adjective
from cdsbias.cds.languages.de_tokens import Tokens, parse_article

_MALE_TO_FEMALE = {"er": "sie", "ihn": "sie", "ihm": "ihr"}
_FEMALE = {"nom": "er", "acc": "ihn", "dat": "ihm"}
_POSSESSIVE_ENDINGS = ("", "e", "en", "em", "es", "er")
_ADJECTIVE_ENDINGS = ("e", "en", "em", "er", "es")
_POSSESSIVES = {stem + end for stem in ("sein", "ihr") for end in _POSSESSIVE_ENDINGS}
PRONOUNS = frozenset({"er", "ihn", "ihm", "sie"} | _POSSESSIVES)
_OBJECT_PREPOSITIONS = ACC_PREPOSITIONS | TWO_WAY_PREPOSITIONS
_WINDOW = 60  # words searched back for a referent
# Relative pronouns that open a clause whose finite verb comes last ("..., den sie
# kannte": sie is its subject).
_RELATIVES = word_set("der die das den dem welcher welche welches welchen welchem")


def same_clause(tokens: Tokens, j: int, i: int) -> bool:
    """Words ``j < i`` stand in one clause (no clause break between them)."""
    return not any(tokens.clause_start(k) for k in range(j + 1, i + 1))


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


class GermanPronouns:
    """The pronoun rules of :class:`cdsbias.cds.languages.de.German` (a mixin: it uses the
    language's ``lexicon`` and ``agreement``)."""

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
        referent = (
            self._referent(tokens, i, refs, "mn", possessive=True) if self.agreement else None
        )
        if referent in ("mx", "nx", "np"):
            # Of a thing, or of a neuter person whose counterpart is masculine ("das
            # Mädchen ... sein Buch" -> "der Junge ... sein Buch"): sein stays.
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
        referent = self._referent(tokens, i, refs, "f?", possessive=True)
        if referent is None:
            self._skip(tokens, i, "ambiguous ihr", skipped)
        if referent not in ("fp", "np"):
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
        if tokens.lower(opener) in SUBORDINATORS or tokens.lower(opener) in _RELATIVES:
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

    def _referent(
        self, tokens: Tokens, i: int, refs: dict[int, str], want: str, *, possessive: bool = False
    ) -> str | None:
        """Nearest earlier referent compatible with a pronoun of ``want`` gender.

        ``want``: ``m`` (er/ihn/ihm), ``mn`` (sein-: masculine or neuter), ``f``
        (singular sie/ihr), ``f?`` (sie/ihr of unknown number). ``possessive``: the
        pronoun is a possessive, for which a person owned through a possessive earlier in
        its clause is no possessor (*Sie half ihren Brüdern und ihren Schwestern*).
        Returns ``mp``/``fp`` (a
        person), ``mx``/``nx``/``fx`` (a non-person noun phrase that can be masculine /
        is neuter / feminine), ``pl`` (plural) or None.
        """
        accept = {
            "m": ("mp", "mx"),
            "mn": ("mp", "mx", "nx", "np"),
            # A neuter person ("das Mädchen", "np") is referred to by "sie"/"ihr" as well.
            "f": ("fp", "fx", "np"),
            "f?": ("fp", "fx", "pl", "np"),
        }[want]
        # Which words head a non-person phrase does not change within a document: each
        # pronoun's search reuses what earlier ones found.
        non_person = tokens.memo.setdefault("non_person", {})
        words = tokens.words
        for j in range(i - 1, max(-1, i - _WINDOW), -1):
            kind = refs.get(j)
            if kind and possessive and self._possessed(tokens, j) and same_clause(tokens, j, i):
                continue
            if not kind:
                # A possessive right after a noun is its attribute and cannot refer to it:
                # in "das Auto seines Nachbarn", "seines" is not the car's.
                if j == i - 1 and tokens.adjacent(i):
                    continue
                if not words[j][:1].isupper():
                    continue  # only a capitalised word heads a noun phrase
                if j in non_person:
                    kind = non_person[j]
                else:
                    kind = non_person[j] = self._non_person(tokens, j)
                if kind and kind[-1] == "~":
                    # A thing owned through a possessive ("sein Buch") in the pronoun's
                    # clause is no possessor of a later possessive there: "Der Vater gab
                    # seinem Sohn sein Buch und seiner Tochter ..." is still the father's.
                    if same_clause(tokens, j, i):
                        continue
                    kind = kind[:-1]
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
                if is_place_adjective(tokens.words[k]):
                    k -= 1  # "der Berliner Senat": an invariant adjective
                    continue
                return None
            parsed = parse_article(tokens.lower(k))
            if parsed is not None:
                if tokens.adjacent(k) and tokens.lower(k - 1) in PREPOSITIONS:
                    return None
                if parsed[0] == "ein" and parsed[1] in ("sein", "ihr"):
                    kind = self._article_gender(tokens, k, parsed)
                    return kind + "~" if kind else None
                return self._article_gender(tokens, k, parsed)
            k -= 1
        return None

    @staticmethod
    def _possessed(tokens: Tokens, j: int) -> bool:
        """Noun ``j`` has a possessive article word (*ihren Brüdern*, *seinem alten Freund*)."""
        k = j - 1
        while k >= 0 and tokens.adjacent(k + 1) and tokens.words[k].islower():
            parsed = parse_article(tokens.lowers[k])
            if parsed is not None:
                return parsed[0] == "ein" and parsed[1] in ("sein", "ihr")
            k -= 1
        return False

    @staticmethod
    def _article_gender(tokens: Tokens, k: int, parsed: tuple) -> str | None:
        """``mx``/``nx``/``fx``: the gender article word ``k`` gives its phrase."""
        genders = {slot[0] for slot in parsed[2]}
        if tokens.lower(k) == "der" and tokens.words[k - 1][:1].isupper() and k > 0:
            return "fx"  # "der Vorsitzende der Partei": a genitive attribute
        if genders == {"n"}:
            return "nx"  # "das Urteil": a referent for sein, never for er
        if tokens.lower(k) == "der" or genders <= {"m", "n"}:
            return "mx"
        return "fx" if genders <= {"f", "x"} else None

    def _skip(self, tokens: Tokens, i: int, reason: str, skipped: list[Skip] | None) -> None:
        if skipped is not None:
            skipped.append(Skip(tokens.starts[i], tokens.ends[i], tokens.words[i], reason))
