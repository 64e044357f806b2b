"""Context-dependent pronouns: ``her`` -> his/him and ``his`` -> her/hers.

English "her" is both a possessive determiner ("her book" -> "his book") and an object
pronoun ("saw her" -> "saw him"); "his" is both a determiner ("his book" -> "her book") and
an independent possessive ("the book is his" -> "the book is hers"). The rule-based
classifier below decides from the neighbouring words only, so it runs at
hundreds of thousands of words per second. With spaCy installed, cdsbias.cds.spacy_analysis
uses the part-of-speech tags instead.

Rule-based fallback for ``her`` (the first matching rule wins; "him"/"his" name the
replacement, i.e. object or possessive):

1. Punctuation follows (``, . ; : ! ? ) ] `` ' " -``) or the text ends: ``him``. A digit
   or a currency sign follows ("her 1995 album"): ``his``, unless a verb with two objects
   precedes ("securing her 17 points", "give her $700").
2. "Her" starts a sentence: ``his`` (an object pronoun cannot start one).
3. Double objects: after a verb with two objects (give, offer, teach, send, earn, bring,
   pay, owe, buy, tell, win, procure, enable, allow, deny, ...) ``him`` if a number word
   follows ("bore her three children") or if one of the next three words, reached only
   through lower-case modifiers, is a noun that is typically the thing given (advice,
   access, admission, respect, support, money, lessons, custody, ...: "gives her advice",
   "earned her much respect", "gave her great design responsibility"). Not when "she" is
   the subject right before the verb ("She offered her advice": her own advice), when the
   noun starts a compound or an -ing form follows it ("taught her English class", "sending
   her gifts flying"), nor after show/lend/secure/sell ("lend her support"). Also ``him``
   for "made her breakfast" (meals only), "took her five minutes" (take/cost + number +
   time unit), "appointed/made/named her governor" (a title noun) or "making her one of",
   "ranked/left her first in" (an ordinal before a preposition or punctuation), and "calls
   her one night" (but "spent her one night", "on her one day off").
4. The next word starts a hyphenated compound ("her on-screen wife", "her then-husband"):
   ``his``.
5. "let" precedes ("let her go", "let her return"): ``him``.
6. The next word usually follows a possessive (own, first, late, former, ...) or is "well
   of" ("her well of inspiration"): ``his``.
7. The next word is capitalised (a name or title: "her Broadway debut", "her The Book"):
   ``his``, but ``him`` after a naming verb ("named her Mary", "crowned her Queen"), after
   "made" when the capitalised words end the phrase ("made her Baroness Bryan in", not
   "made her Broadway debut"), after a verb with two objects when a genitive, a title
   with a dot or a currency follows ("earned her Crump's support", "sends her Dr. Elmo",
   "offered her US$10 million"), and after "bore" before a name and a comma ("had borne
   her Gratian, whom").
8. "in/by/to her will": ``his`` (the noun); "give her all" before a preposition or
   punctuation (the idiom): ``his``.
9. A degree word or adverb follows (more, most, very, later, back, then, often, any -ly
   adverb): ``his`` if a content word comes right after it ("her later years", "her back
   injury", "her highly successful album"), else ``him`` ("met her later", "brought her
   back", "treated her badly", "make her personally liable"). "so" and "too" never sit
   between a possessive and its noun: "found her so agreeable", "considered her too close".
10. A function word follows (preposition, determiner, conjunction, pronoun, auxiliary, or
    an adverb such as "again", "there"): ``him``.
11. Verb patterns: a past-tense verb right after "her" ("the views of her became",
    "pioneers like her provided"), a causative/perception verb before and a listed bare
    verb after ("saw her perform", "helped her win"), a perception verb and an -ing form
    ("heard her singing"; "made her racing debut" stays ``his``), get/keep/set/start and
    an -ing form before punctuation ("kept her waiting."),
    have/get/make and a participle ("had her arrested"), an -ing or -ed form followed by
    its own object ("with her defending him", "like her created a"), "with her covered
    in", a speech participle before its complement ("called to her saying that"), a
    naming participle before a name or quote ("an opera for her entitled Peri"), or an
    object-complement verb and a listed adjective or an un-adjective ("made her famous",
    "held her hostage", "leave her unprotected"): ``him``.
12. Otherwise the next word is taken to be a noun or adjective: ``his``.

``his`` is almost always a determiner, so it becomes ``hers`` only before punctuation or the
end of the text, an article ("called his a ``sweet'' band"), or a preposition, conjunction
or auxiliary ("his and hers", "the choice was his to make"; but "in his will"), never before
a compound or a degree word that modifies the next word ("his on-screen wife", "his back
pain").

Measured on 180 hand-labelled ``her`` in GAP (tests/assets/cds/her_labelled_gap.tsv;
141 possessive, 39 object): these rules 178 correct (98.9 %; 176 before the double-object
and verb rules above); spaCy en_core_web_sm 3.8.0 tags (cdsbias.cds.spacy_analysis) 177
(98.3 %); always-possessive 141 (78.3 %). The two misses: "asked her to set down her
``little doctrine''" (a quote after a possessive) and "led to her holding auditions" (a
gerund; "his holding" reads as well as "him holding"). On all of GAP, 22 of the 7,188
her/his decisions changed with those rules, all 22 for the better (checked by hand).
"""

from __future__ import annotations

import re

from cdsbias.cds.wordlists import load_word_sets, resource_path

# Every word list of these rules is data: one [section] each in en_context_words.txt, with
# the rule it serves and examples.
_WORDS = load_word_sets(resource_path("en_context_words.txt"))
POSSESSIVE_FOLLOWERS = _WORDS["possessive_followers"]

_PREPOSITIONS = _WORDS["prepositions"]
_DETERMINERS = _WORDS["determiners"]
_CONJUNCTIONS = _WORDS["conjunctions"]
_PRONOUNS = _WORDS["pronouns"]
_AUXILIARIES = _WORDS["auxiliaries"]
_ADVERBS = _WORDS["adverbs"]

DEGREE_WORDS = _WORDS["degree_words"]

# Rule 10.
OBJECT_FOLLOWERS = (
    frozenset(_PREPOSITIONS | _DETERMINERS | _CONJUNCTIONS | _PRONOUNS | _AUXILIARIES | _ADVERBS)
    - POSSESSIVE_FOLLOWERS
    - DEGREE_WORDS
)

LY_NOT_ADVERBS = _WORDS["ly_not_adverbs"]

BARE_VERB_GOVERNORS = _WORDS["bare_verb_governors"]
BASE_VERBS = _WORDS["base_verbs"]
PERCEPTION_VERBS = _WORDS["perception_verbs"]
ALWAYS_OBJECT_AFTER = _WORDS["always_object_after"]
PARTICIPLE_GOVERNORS = _WORDS["participle_governors"]

DITRANSITIVE_VERBS = _WORDS["ditransitive_verbs"]
NUMBER_WORDS = _WORDS["number_words"]
COMPLEMENT_VERBS = _WORDS["complement_verbs"]
COMPLEMENT_ADJECTIVES = _WORDS["complement_adjectives"]

NAMING_VERBS = _WORDS["naming_verbs"]

SECOND_OBJECT_NOUNS = _WORDS["second_object_nouns"]
SECOND_OBJECT_VERBS = (DITRANSITIVE_VERBS | _WORDS["second_object_verbs_added"]) - _WORDS[
    "second_object_verbs_removed"
]
MAKE_SECOND_OBJECTS = _WORDS["make_second_objects"]
TIME_VERBS = _WORDS["time_verbs"]
TIME_NOUNS = _WORDS["time_nouns"]
APPOINTING_VERBS = _WORDS["appointing_verbs"]
TITLE_NOUNS = _WORDS["title_nouns"]
MAKE_VERBS = _WORDS["make_verbs"]
RANKING_VERBS = _WORDS["ranking_verbs"]
ORDINALS = _WORDS["ordinals"]
PAST_TENSE_VERBS = _WORDS["past_tense_verbs"]
SPEECH_PARTICIPLES = _WORDS["speech_participles"]
_SPEECH_COMPLEMENTS = _WORDS["speech_complements"]
NAMING_PARTICIPLES = _WORDS["naming_participles"]
GIVE_VERBS = _WORDS["give_verbs"]
WILL_NOUN_PREPOSITIONS = _WORDS["will_noun_prepositions"]

# "his" is independent only before these (or punctuation / end of text).
INDEPENDENT_HIS_FOLLOWERS = (
    _PREPOSITIONS | _CONJUNCTIONS | _AUXILIARIES | _WORDS["independent_his_added"]
) - POSSESSIVE_FOLLOWERS

# Quotes count too: GAP writes ``...'' and "called him ``frugal''" is far more common than a
# quoted title right after a possessive.
_OBJECT_PUNCTUATION = frozenset(",.;:!?)]}\"—–-/`'")


def _first_visible(gap: str) -> str:
    """Returns the first non-space character of the text between two words, or ''."""
    stripped = gap.lstrip()
    return stripped[0] if stripped else ""


_BEAR_VERBS = _WORDS["bear_verbs"]
_TIMES_OF_DAY = _WORDS["times_of_day"]
_SPEND_VERBS = _WORDS["spend_verbs"]
_ONGOING_GOVERNORS = _WORDS["ongoing_governors"]
_CURRENCY = frozenset("$£€¥")
_TRAILING_PUNCTUATION = ",.;:!?)]}\"'`"
_UN_ADJECTIVE_ENDINGS = ("ed", "able", "ible")
# "give her all during her stint" (her best effort), not "gave her all the money".
_ALL_IDIOM_FOLLOWERS = (_PREPOSITIONS | _CONJUNCTIONS) - {"of"}
# After a verb with two objects, "her" + a genitive ("Crump's support"), a title with a dot
# ("Dr. Elmo") or a currency ("US$10") starts the direct object.
_DITRANSITIVE_CAPITALISED = re.compile(
    r"\s+(?:[A-Z][\w.-]*(?: [A-Z][\w.-]*){0,2}['’]s\b|(?:Dr|Mr|Mrs|Ms|Prof)\.\s|[A-Z]{1,3}[$£€])"
)

# An -ing word followed by one of these is a verb with an object, so "her" is its subject.
_VERB_OBJECT_STARTERS = (_DETERMINERS | _PRONOUNS) - {"that", "which", "what"}


def _modifies_next(gap_after_next: str, word_after_next: str) -> bool:
    """True if a degree word or adverb is followed directly by a content word."""
    return (
        gap_after_next in (" ", "-")
        and bool(word_after_next)
        and word_after_next.lower() not in OBJECT_FOLLOWERS
    )


def her_is_possessive(
    previous_word: str,
    gap_after: str,
    next_word: str,
    gap_after_next: str = "",
    word_after_next: str = "",
    *,
    rest: str = "",
    before: str = "",
) -> bool:
    """Decides whether one ``her`` is a possessive determiner (-> his) or an object (-> him).

    Args:
        previous_word: The word before ``her`` (any case), or ``""``.
        gap_after: The characters between ``her`` and the next word (spaces, punctuation,
            digits), or the rest of the text if no word follows.
        next_word: The word after ``her`` as written, or ``""`` at the end of the text.
        gap_after_next: The characters between the next word and the one after it.
        word_after_next: The word after the next word, or ``""``.
        rest: The text right after ``her`` (a few words), for the rules that look further.
        before: The text right before ``her`` (a few words), or ``""``.

    Returns:
        True for possessive (``his``), False for object (``him``).
    """
    previous_lower = previous_word.lower()
    mark = _first_visible(gap_after)
    if mark.isdigit() or mark in _CURRENCY:
        return previous_lower not in DITRANSITIVE_VERBS  # "her 1995 album", "give her $700"
    if mark:
        return mark not in _OBJECT_PUNCTUATION
    if not next_word:
        return False
    if not previous_word and _starts_sentence(before):
        return True  # "Her published works": an object cannot start a sentence
    next_lower = next_word.lower()
    after_next_lower = word_after_next.lower()
    if previous_lower in DITRANSITIVE_VERBS and next_lower in NUMBER_WORDS:
        return False  # "bore her three children", "giving her twenty-four hours"
    if (
        (previous_lower in SECOND_OBJECT_VERBS and _second_object_follows(rest))
        or (previous_lower in MAKE_VERBS and next_lower in MAKE_SECOND_OBJECTS)
    ) and not _subject_is_she(before):
        return False  # "gives her advice", "earned her much respect", "makes her breakfast"
    if (
        previous_lower in TIME_VERBS
        and next_lower in NUMBER_WORDS
        and after_next_lower in TIME_NOUNS
    ):
        return False  # "took her five minutes"
    if previous_lower in APPOINTING_VERBS and (
        next_lower in TITLE_NOUNS or (next_lower == "one" and after_next_lower == "of")
    ):
        return False  # "appointed her governor", "making her one of the"
    if (
        previous_lower in RANKING_VERBS
        and next_lower in ORDINALS
        and (not word_after_next or gap_after_next.strip() or after_next_lower in _PREPOSITIONS)
    ):
        return False  # "ranked her first in", "left her fourteenth."
    if gap_after_next == "-" and word_after_next:  # "her on-screen wife", "her then-husband"
        return True
    if previous_lower in ALWAYS_OBJECT_AFTER:
        return False
    if next_lower in POSSESSIVE_FOLLOWERS or (next_lower == "well" and after_next_lower == "of"):
        return True  # "her own", "her well of inspiration"
    if (
        next_lower == "one"
        and after_next_lower in _TIMES_OF_DAY
        and previous_lower not in _SPEND_VERBS
        and previous_lower not in _PREPOSITIONS
    ):
        return False  # "calls her one night", not "spent her one night", "on her one day off"
    if next_word[0].isupper() and next_word != "I":  # a name or a title: "her The Book"
        if previous_lower in NAMING_VERBS:
            return False  # "named her Mary"
        if previous_lower in MAKE_VERBS:
            return not _capitalised_run_ends_phrase(rest)  # "made her Baroness Bryan in"
        if previous_lower in _BEAR_VERBS and gap_after_next[:1] in (",", ";", "."):
            return False  # "she had borne her Gratian, whom": a child's name
        return not (
            previous_lower in DITRANSITIVE_VERBS and _DITRANSITIVE_CAPITALISED.match(rest)
        )  # "earned her Crump's support", "sends her Dr. Elmo", "offered her US$10"
    if next_lower == "will" and previous_lower in WILL_NOUN_PREPOSITIONS:
        return True  # "in her will"
    if next_lower == "all" and previous_lower in GIVE_VERBS:
        # "give her all during", "gave her all." (the idiom), not "gave her all the money"
        return (
            not word_after_next
            or bool(gap_after_next.strip())
            or after_next_lower in _ALL_IDIOM_FOLLOWERS
        )
    if next_lower in DEGREE_WORDS:
        return _modifies_next(gap_after_next, word_after_next)
    if next_lower in OBJECT_FOLLOWERS:
        return False
    if next_lower.endswith("ly") and next_lower not in LY_NOT_ADVERBS:
        if previous_lower in COMPLEMENT_VERBS and after_next_lower in COMPLEMENT_ADJECTIVES:
            return False  # "make her personally liable"
        return _modifies_next(gap_after_next, word_after_next)
    if next_lower in PAST_TENSE_VERBS:
        return False  # "the views of her became hateful"
    if previous_lower in BARE_VERB_GOVERNORS and next_lower in BASE_VERBS:
        return False
    if previous_lower in PERCEPTION_VERBS and next_lower.endswith("ing"):
        return False  # "heard her singing"; but "made her racing debut"
    if previous_lower in PARTICIPLE_GOVERNORS and next_lower.endswith("ed"):
        return False
    if next_lower.endswith("ing") and after_next_lower in _VERB_OBJECT_STARTERS:
        return False  # "resulting in her choosing to", "with her defending him"
    if (
        next_lower.endswith("ed")
        and gap_after_next == " "
        and after_next_lower in _VERB_OBJECT_STARTERS
    ):
        return False  # "salonnieres like her created a certain kind of"
    if previous_lower == "with" and next_lower.endswith("ed") and after_next_lower in ("in", "by"):
        return False  # "ends with her covered in red paint"
    if (
        previous_lower in _ONGOING_GOVERNORS
        and next_lower.endswith("ing")
        and gap_after_next.strip()
    ):
        return False  # "getting her smoking, is all", "kept her waiting."
    if next_lower in SPEECH_PARTICIPLES and (
        after_next_lower in _SPEECH_COMPLEMENTS or gap_after_next.strip()
    ):
        return False  # "called to her saying that", not "her asking price"
    if next_lower in NAMING_PARTICIPLES and (
        word_after_next[:1].isupper() or any(quote in gap_after_next for quote in "`'\"")
    ):
        return False  # "a song with her called ``The Year''"
    # "made her famous", "leave her unprotected"; otherwise a noun or adjective follows.
    return not (
        previous_lower in COMPLEMENT_VERBS
        and (
            next_lower in COMPLEMENT_ADJECTIVES
            or (next_lower.startswith("un") and next_lower.endswith(_UN_ADJECTIVE_ENDINGS))
        )
    )


def _starts_sentence(before: str) -> bool:
    """True if nothing but a sentence end (or the start of the text) precedes."""
    stripped = before.rstrip().rstrip("`'\"‘“(")
    return not stripped or stripped[-1] in ".!?"


def _subject_is_she(before: str) -> bool:
    """True if "she" comes right before the verb ("She offered her advice"): then "her" is
    most likely her own (an object "her" would be another woman), so a possessive."""
    words = before.split()
    return len(words) >= 2 and words[-2].lower() == "she"


def _second_object_follows(rest: str) -> bool:
    """True if one of the next three words is a SECOND_OBJECT_NOUNS noun, reached only
    through lower-case modifiers ("much respect", "great design responsibility")."""
    tokens = rest.split(None, 4)[:4]
    for position, token in enumerate(tokens[:3]):
        word = token.rstrip(_TRAILING_PUNCTUATION).lower()
        if word.rsplit("-", 1)[-1] in SECOND_OBJECT_NOUNS:  # also "super-strength"
            # Not the first part of a compound ("her English class", "her support staff"),
            # nor the subject of an -ing form ("sending her gifts flying"); but "English
            # lessons" is two listed nouns.
            following = tokens[position + 1] if position + 1 < len(tokens) else ""
            following_lower = following.rstrip(_TRAILING_PUNCTUATION).lower()
            return (
                word != token.lower()
                or not following[:1].isalpha()
                or following[:1].isupper()
                or following_lower in OBJECT_FOLLOWERS
                or following_lower in SECOND_OBJECT_NOUNS
            )
        if (
            word != token.lower()
            or not word.isalpha()
            or word in OBJECT_FOLLOWERS
            or word in POSSESSIVE_FOLLOWERS
            or token[:1].isupper()
        ):
            return False
    return False


def _capitalised_run_ends_phrase(rest: str) -> bool:
    """After "made her": True if the capitalised words that follow end the phrase ("made her
    Baroness Bryan in ...", "made him Archbishop of ...": a title, so object), False if a
    common noun follows them ("made her Broadway debut": a possessive)."""
    for token in rest.split(None, 6)[:6]:
        if token[:1].isupper():
            if token[-1] in _TRAILING_PUNCTUATION:
                return True
            continue
        word = token.rstrip(_TRAILING_PUNCTUATION).lower()
        return not word.isalpha() or word in OBJECT_FOLLOWERS
    return True


def his_is_independent(
    gap_after: str,
    next_word: str,
    gap_after_next: str = "",
    word_after_next: str = "",
    previous_word: str = "",
) -> bool:
    """Decides whether ``his`` stands alone (-> hers) rather than before a noun (-> her).

    Args:
        gap_after: The characters between ``his`` and the next word.
        next_word: The next word as written, or ``""`` at the end of the text.
        gap_after_next: The characters between the next word and the one after it.
        word_after_next: The word after the next word, or ``""``.
        previous_word: The word before ``his``, or ``""``.
    """
    mark = _first_visible(gap_after)
    if mark.isdigit():
        return False
    if mark:
        return mark in _OBJECT_PUNCTUATION
    if not next_word:
        return True
    if next_word in ("a", "an", "the"):
        return True  # "called his a ``sweet'' voice": never a determiner before an article
    next_lower = next_word.lower()
    if next_lower == "will" and previous_word.lower() in WILL_NOUN_PREPOSITIONS:
        return False  # "in his will"
    if gap_after_next == "-" and word_after_next:  # "his on-screen wife"
        return False
    if next_lower in DEGREE_WORDS:  # "his back pain", "his so-called"
        return not _modifies_next(gap_after_next, word_after_next)
    return next_lower in INDEPENDENT_HIS_FOLLOWERS
