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


def word_set(words: str) -> frozenset[str]:
    """Builds a set from a whitespace-separated word list (keeps the lists readable)."""
    return frozenset(words.split())


# Rule 6: words that follow a possessive determiner far more often than an object pronoun.
POSSESSIVE_FOLLOWERS = word_set(
    """own first last only many few other late former new best next second third early
    elder eldest older oldest younger youngest whole entire latest final debut"""
)

_PREPOSITIONS = word_set(
    """to in on at for with from by about into onto as of after before over under
up down out off back away through during around across against along among between behind
beyond near toward towards upon within without via like unlike until till since than per
despite except inside outside throughout alongside"""
)
_DETERMINERS = word_set("""a an the this that these those some any no every each all both either
neither another such what which whose""")
_CONJUNCTIONS = word_set("""and or but nor so yet because if when while although though whereas
unless whether once where why how""")
_PRONOUNS = word_set("""i me my you your he him his she her hers it its we us our they them their
myself yourself himself herself itself ourselves themselves who whom someone something
anything everything nothing anyone everyone nobody somebody everybody""")
_AUXILIARIES = word_set(
    """is was were are be been am has had have having do does did will would
shall should can could may might must not"""
)
_ADVERBS = word_set("""again too also very not never sometimes there here
well once twice later soon anymore instead alone together tonight today tomorrow
yesterday already just even more most much less least enough anyway forever
afterwards afterward thereafter immediately everywhere anywhere somewhere nowhere whilst
due""")

# Rule 9: before an adjective or noun these modify it ("her more notable works", "her later
# years", "her back injury"); otherwise they follow an object ("loved her more", "met her
# later", "brought her back").
DEGREE_WORDS = word_set(
    "more most less least very later back rather quite much then now often ever always once still"
)

# Rule 10.
OBJECT_FOLLOWERS = (
    frozenset(_PREPOSITIONS | _DETERMINERS | _CONJUNCTIONS | _PRONOUNS | _AUXILIARIES | _ADVERBS)
    - POSSESSIVE_FOLLOWERS
    - DEGREE_WORDS
)

# Rule 9: -ly words that are adjectives or nouns, so "her ___" is possessive.
LY_NOT_ADVERBS = word_set(
    """family only early lovely friendly elderly likely lonely daily weekly monthly yearly
    holy ugly silly curly lively deadly costly bully ally belly lily jelly rally folly
    assembly supply reply italy emily kelly molly sally holly polly billy ely beverly
    shelly nelly dolly lilly"""
)

# Rule 11: verbs whose object can be followed by a bare infinitive or an -ing form.
BARE_VERB_GOVERNORS = word_set(
    """let lets letting make makes made making help helps helped helping see sees saw seen
    seeing watch watches watched watching hear hears heard hearing have has had having bid
    feel feels felt notice noticed catch caught find found keep kept leave left"""
)
BASE_VERBS = word_set(
    """be become go come do get take leave die marry join know sing perform write appear
    give tell find think seem keep bring meet learn understand believe want need try feel
    win lose live play fall run walk sit stand speak talk cry laugh smile dance eat drink sleep
    wait kill pay buy sell begin stop continue remain enter attend study teach pursue
    locate train overthrow discover exit drop dress promise reach see hear make let help
    decide realize realise recover survive succeed fail agree accept admit forget remember
    answer ask read sing compose produce direct defeat beat save rescue protect prepare
    obtain gain achieve sign"""
)
PERCEPTION_VERBS = word_set(
    """see sees saw seen seeing watch watches watched watching hear hears heard hearing feel
    feels felt notice noticed catch caught find found keep kept leave left imagine imagined"""
)
# Rule 5: after "let", "her" is an object whatever follows ("let her go", "let her
# return"); "let her hair down" is rare.
ALWAYS_OBJECT_AFTER = word_set("let lets letting")
# Rule 11: a past participle after have/get/make is an object complement ("had her
# arrested", "got her fired"), unlike "her married name".
PARTICIPLE_GOVERNORS = word_set(
    "have has had having get gets got gotten getting make makes made making want wanted"
)

# Rules 1 and 3: verbs with two objects ("bore him three children", "offered her two
# years"); rule 11: verbs with an object complement ("made her famous", "held him hostage").
DITRANSITIVE_VERBS = word_set(
    """give gives gave given giving offer offers offered offering bore borne bear bears bearing
    teach teaches taught teaching send sends sent sending show shows showed shown grant granted
    granting award awarded awarding earn earned earning earns cost costs bring
    brought pay paid promise promised hand handed lend lent lending owe owed owes wish wished
    buy bought allow allowed deny denied afford afforded secure secured securing sell sold
    supply supplied procure procured enable enabled"""
)
NUMBER_WORDS = word_set(
    """one two three four five six seven eight nine ten eleven twelve twenty thirty forty
    fifty hundred thousand million several"""
)
COMPLEMENT_VERBS = word_set(
    """make makes made making leave leaves left leaving hold holds held holding keep keeps
    kept keeping find finds found finding consider considers considered considering declare
    declared declaring believe believes believed drive drove driven render renders rendered
    rendering get gets got getting"""
)
COMPLEMENT_ADJECTIVES = word_set(
    """happy unhappy famous dead alive hostage captive prisoner unable able angry sad sick ill
    uncomfortable nervous jealous popular responsible eligible ineligible available
    unconscious pregnant free safe crazy mad rich wealthy homeless guilty innocent insane
    unfit fit paralyzed paralysed blind deaf drunk liable vulnerable speechless"""
)

# Rule 7: "named her Mary", "called her Lady", "crowned him King".
NAMING_VERBS = word_set(
    """name names named naming rename renamed renaming call calls called calling dub dubs
    dubbed crown crowns crowned crowning nickname nicknamed christen christened rechristen
    rechristened rechristening baptise baptised baptize baptized proclaim proclaimed
    declare declared elect elected appoint appointed"""
)

# Rule 3: after a verb with two objects, "her" + one of these nouns (possibly after an
# adjective or a noun modifier: "gave him great design responsibility") is object + direct
# object ("gives him advice", "procured him admission", "earned him much respect"), not a
# possessive. Only nouns that are far more often the thing given than something she owns;
# "show"/"lend" are left out (they take "her support" as a possessive: "lend her support").
SECOND_OBJECT_NOUNS = word_set(
    """advice encouragement command recognition respect admission access support information
    permission credit money drugs breakfast lunch dinner attention lessons training instruction
    instructions fame acclaim praise custody shelter refuge asylum protection assistance help
    aid hope strength power control responsibility freedom messages letters gifts
    presents flowers trouble problems difficulty nightmares tips news feedback directions
    warnings confidence courage pleasure satisfaction joy inspiration insight toughness
    techniques skills fu karate judo english french latin mathematics manners discipline
    comparisons compensation royalties opportunities commissions promotion status"""
)
SECOND_OBJECT_VERBS = (
    DITRANSITIVE_VERBS
    | word_set(
        """tell tells told telling supplies supplying brings bringing win wins won winning
        owes teaches"""
    )
) - word_set(
    """show shows showed shown showing lend lends lent lending secure secured securing sell
    sold"""
)
# "makes him breakfast": only meals (not "made her living", "made her money").
MAKE_SECOND_OBJECTS = word_set("breakfast lunch dinner supper tea coffee")
# Rule 3: "took him five minutes", "cost her three years".
TIME_VERBS = word_set("take takes took taken taking cost costs costing")
TIME_NOUNS = word_set("years months weeks days hours minutes seconds decades")
# Rule 3: "appointed her governor", "made him foreign editor", "made her one of the".
APPOINTING_VERBS = word_set(
    """appoint appoints appointed appointing elect elects elected electing make makes made
    making name names named naming crown crowned crowning proclaim proclaimed declare
    declared"""
)
TITLE_NOUNS = word_set(
    """governor editor president chairman chairwoman captain director manager chief
    ambassador minister secretary leader member partner heir heiress officer commander coach
    professor consul regent deputy foreign general bishop archbishop abbot abbess"""
)
MAKE_VERBS = word_set("make makes made making")
# Rule 3: "ranked him first in", "left him fourteenth.".
RANKING_VERBS = word_set(
    "rank ranks ranked ranking rate rates rated rating place places placed placing left leave"
)
ORDINALS = word_set(
    """first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth
    thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth last"""
)
# Rule 11: a past-tense verb right after "her" ends her noun phrase ("the views of her
# became hateful", "a devotion to her sprang up"). Forms that are also nouns (left, set,
# hit, cut, shot, rose, won) are not listed.
PAST_TENSE_VERBS = word_set(
    """became began came went led sprang grew took gave made said told kept held met knew
    brought sought fought taught caught bought felt stood understood wrote rode drove
    spoke broke chose fell ran sang swam sat ate drank forgot got struck threw flew hid wept
    slept stole swore tore wore woke"""
)
# "called to her saying that": a participle of speech, not "her saying" (a noun).
SPEECH_PARTICIPLES = word_set("saying asking telling shouting yelling screaming begging whispering")
_SPEECH_COMPLEMENTS = word_set("that to for about if whether why what how")
# "her called ``The Year''": a naming participle before a name or a quote.
NAMING_PARTICIPLES = word_set("called named dubbed nicknamed titled entitled")
GIVE_VERBS = word_set("give gives gave given giving")
# "in her will", "according to her will": the noun, not the auxiliary.
WILL_NOUN_PREPOSITIONS = word_set("in by under to against of")

# "his" is independent only before these (or punctuation / end of text).
INDEPENDENT_HIS_FOLLOWERS = (
    _PREPOSITIONS | _CONJUNCTIONS | _AUXILIARIES | word_set("too which that alone instead")
) - POSSESSIVE_FOLLOWERS

# Quotes count too: GAP writes ``...'' and "called him ``frugal''" is far more common than a
# quoted title right after a possessive.
_OBJECT_PUNCTUATION = frozenset(",.;:!?)]}\"—–-/`'")


def _first_visible(gap: str) -> str:
    """Returns the first non-space character of the text between two words, or ''."""
    stripped = gap.lstrip()
    return stripped[0] if stripped else ""


_BEAR_VERBS = word_set("bear bears bore borne bearing")
_TIMES_OF_DAY = word_set("day night morning evening afternoon")
_SPEND_VERBS = word_set("spend spends spent spending")
# "got her thinking,", "kept her waiting.": verbs that take an object and an -ing form (only
# before punctuation: "got her training in Paris" is hers).
_ONGOING_GOVERNORS = word_set("get gets got getting keep keeps kept keeping")
_CURRENCY = frozenset("$£€¥")
_TRAILING_PUNCTUATION = ",.;:!?)]}\"'`"
_UN_ADJECTIVE_ENDINGS = ("ed", "able", "ible")
# "give her all during her stint" (her best effort), not "gave her all the money".
_ALL_IDIOM_FOLLOWERS = (_PREPOSITIONS | _CONJUNCTIONS) - word_set("of")
# After a verb with two objects, "her" + a genitive ("Crump's support"), a title with a dot
# ("Dr. Elmo") or a currency ("US$10") starts the direct object.
_DITRANSITIVE_CAPITALISED = re.compile(
    r"\s+(?:[A-Z][\w.-]*(?: [A-Z][\w.-]*){0,2}['’]s\b|(?:Dr|Mr|Mrs|Ms|Prof)\.\s|[A-Z]{1,3}[$£€])"
)

# An -ing word followed by one of these is a verb with an object, so "her" is its subject.
_VERB_OBJECT_STARTERS = (_DETERMINERS | _PRONOUNS) - word_set("that which what")


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
