"""English verb agreement for a subject rewritten to singular *they* (he/she -> they).

*They* takes plural agreement, so the finite verb of a rewritten subject changes: *is* ->
*are*, *was* -> *were*, *has* -> *have*, *does* -> *do*, the negative contractions (*isn't*
-> *aren't*, *wasn't*, *doesn't*, *hasn't*; the word pattern of en.py splits "isn't" into
"isn" + "t", so the stem changes) and the third-person *-s/-es* of other verbs (*goes* ->
*go*, *tries* -> *try*, *watches* -> *watch*). Modals (*can*, *would*, *'d*, *'ll*), past
tenses and verbs whose subject is something else are never touched: the rules only look at
the verb that belongs to the rewritten pronoun.

Which verb belongs to it (rules on neighbouring words only, no parse):

1. **Declaratives**: the first word after the pronoun, past up to three adverbs (*she now
   almost always wins*, any *-ly* adverb, *herself*), with nothing but spaces between.
2. **Coordination**: after an agreed present-tense verb, each later *and/or/but* in the same
   clause followed by a third-person verb shares the subject (*he denies the charges and
   insists*). The clause ends at punctuation that ends a sentence or a quote, at a new
   subject pronoun or at a word that opens a clause of its own (``clause_ends``). The
   candidate must be *is/was/has/does* or look like a verb by what follows it: a
   determiner or pronoun (*and sends
   it*), or, unless the word before *and* is itself an *-s* word (*cats and dogs in*), a
   preposition or adverb (*and teaches at*, *and lectures widely*).
   The agreed verb itself may end in *-s* (*she declines and rolls over*); *it*/*you*
   before *and/or/but* is an object, not a new subject (*he fixes it and goes*). After a
   comma, a lower-case third-person verb before an article, a possessive or an object
   pronoun shares the subject too (*she gets up, brushes her teeth*), unless the subject
   is in a clause opened by a ``SUBORDINATORS`` word, which the comma ends. After a past
   tense (no agreement of its own), only a coordinated *is/was/has/does* within 16 words
   agrees (*she wanted to come but was tired* -> *but were*).
3. **Questions and inversion**: *is/was/has/does* (and their negatives) right before the
   pronoun in a sentence that ends with a question mark is inverted (*does she know?* ->
   *do they know?*, *isn't she?* -> *aren't they?*); the main verb after it is a bare form
   and stays. So is one after a clause-opening ``inverting_adverbs`` word (*Nor has he
   been* -> *Nor have they been*, *and so is she* -> *and so are they*).
4. **'s**: *has* before a participle of ``has_participles`` or an *-ed/-en* word with an
   object (*he's been*, *she's finished the report*), otherwise *is* (*she's expected*).

Word lists: ``resources/wordlists/en_neutral.txt``.
"""

from __future__ import annotations

import re

from cdsbias.cds.languages.en_pronouns import (
    LY_NOT_ADVERBS,
    OBJECT_FOLLOWERS,
    PAST_TENSE_VERBS,
)
from cdsbias.cds.wordlists import load_word_sets, resource_path

_WORDS = load_word_sets(resource_path("en_neutral.txt"))
SUBJECT_ADVERBS = _WORDS["subject_adverbs"]
NOT_VERBS = _WORDS["not_verbs"]
HAS_PARTICIPLES = _WORDS["has_participles"]
ES_STEMS = _WORDS["es_stems"]
CLAUSE_ENDS = _WORDS["clause_ends"]
INVERTING_ADVERBS = _WORDS["inverting_adverbs"]

#: Third-person singular forms with an irregular plural-agreement form.
IRREGULAR = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "isn": "aren",
    "wasn": "weren",
    "hasn": "haven",
    "doesn": "don",
}
#: The auxiliaries a question puts before its subject.
_INVERTED = frozenset(IRREGULAR)
# "watches" -> "watch", but "aches" -> "ache".
_ES_ENDINGS = ("sses", "shes", "ches", "xes", "zzes")
_ES_KEEP_E = frozenset({"aches", "caches", "niches"})
_MAX_ADVERBS = 3
_SUBJECTS = frozenset({"i", "you", "we", "they", "it", "he", "she", "xe", "ze", "ey"})
_CLAUSE_PUNCTUATION = frozenset('.;:!?"“”()[]')
_CONJUNCTIONS = frozenset({"and", "or", "but"})
# After a coordinated verb: words that start its object.
_OBJECT_STARTERS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "his", "her", "their", "its", "my"}
    | {"your", "our", "him", "them", "it", "me", "us", "you", "he", "she", "they", "some"}
)
_APOSTROPHES = "'’"
# How many words after a past tense coordinated_verbs looks for a coordinated is/was/has.
_PAST_WINDOW = 16
_IRREGULAR_WORD = re.compile(r"\b(?i:is|was|has|does)(?:n['’]t)?\b")
# After a comma-listed verb: what starts its object ("brushes her teeth", "locks the door").
_LIST_OBJECTS = frozenset(
    {"a", "an", "the", "his", "her", "their", "its", "my", "your", "our"}
    | {"him", "them", "it", "me", "us"}
)
#: A subject after one of these is in a subordinate clause that a comma ends.
SUBORDINATORS = frozenset(
    {"after", "as", "when", "while", "if", "because", "since", "before", "until", "although"}
    | {"though", "once", "whenever", "unless", "whereas", "whether", "where", "that", "than"}
)

Token = tuple[int, int, str]


def is_adverb(lower: str) -> bool:
    """True for a word that may stand between a subject and its verb."""
    return lower in SUBJECT_ADVERBS or (
        len(lower) > 4 and lower.endswith("ly") and lower not in LY_NOT_ADVERBS
    )


def plural_verb(lower: str) -> str | None:
    """The plural-agreement form of a third-person singular present verb, or None.

    Args:
        lower: A lower-case word (``"goes"``, ``"isn"`` for "isn't").

    Returns:
        ``"go"``, ``"aren"``, ...; None when ``lower`` is not such a verb (``"went"``,
        ``"can"``, ``"thus"``).
    """
    if lower in IRREGULAR:
        return IRREGULAR[lower]
    if (
        len(lower) < 3
        or not lower.endswith("s")
        or lower.endswith(("ss", "us", "is"))
        or lower in NOT_VERBS
        or not lower.isalpha()
    ):
        return None
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"  # tries -> try; but dies -> die
    if lower.endswith(_ES_ENDINGS) and lower not in _ES_KEEP_E:
        return lower[:-2]
    if lower.endswith("oes") and lower[:-2] in ES_STEMS:
        return lower[:-2]
    return lower[:-1]


def is_past_tense(lower: str) -> bool:
    """True for a past tense that may head a subject's predicate: an irregular one of
    en_pronouns' ``past_tense_verbs`` or a regular *-ed* form."""
    return lower in PAST_TENSE_VERBS or (len(lower) > 4 and lower.endswith("ed"))


def _gap(text: str, tokens: list[Token], left: int, right: int) -> str:
    return text[tokens[left][1] : tokens[right][0]]


def verb_after(text: str, tokens: list[Token], index: int) -> int | None:
    """The token index of the first word after ``tokens[index]`` that is not an adverb
    (at most three skipped), with only spaces between; None otherwise."""
    skipped = 0
    position = index + 1
    while position < len(tokens):
        if _gap(text, tokens, position - 1, position).strip():
            return None
        lower = tokens[position][2].lower()
        if not is_adverb(lower):
            return position
        skipped += 1
        if skipped > _MAX_ADVERBS:
            return None
        position += 1
    return None


def inverted_auxiliary(text: str, tokens: list[Token], index: int) -> int | None:
    """The token index of a question's auxiliary right before the subject ``tokens[index]``
    (*does she*, *isn't he*), or None when there is none or the sentence is no question."""
    position = index - 1
    if position < 0 or _gap(text, tokens, position, index).strip():
        return None
    if (
        tokens[position][2].lower() == "t"
        and position > 0
        and _gap(text, tokens, position - 1, position) in _APOSTROPHES
    ):
        position -= 1  # "isn't she": the stem is the token before "t"
    if tokens[position][2].lower() not in _INVERTED:
        return None
    if _after_inverting_adverb(text, tokens, position):
        return position  # "Nor has he been", "and so is she"
    rest = text[tokens[index][1] :]
    ends = [rest.find(mark) for mark in ".!?"]
    found = [end for end in ends if end >= 0]
    return position if found and min(found) == ends[2] else None


def _after_inverting_adverb(text: str, tokens: list[Token], auxiliary: int) -> bool:
    """True if an ``inverting_adverbs`` word that opens its clause stands right before the
    auxiliary ``tokens[auxiliary]`` ("Nor has", "and so is", "Not only does"; not "It never
    is she", where "it" is the subject)."""
    adverb = auxiliary - 1
    if adverb < 0 or _gap(text, tokens, adverb, auxiliary).strip():
        return False
    if tokens[adverb][2].lower() not in INVERTING_ADVERBS:
        return False
    if tokens[adverb][2].lower() == "only" and adverb and tokens[adverb - 1][2].lower() == "not":
        adverb -= 1  # "Not only does she"
    if adverb == 0:
        return not text[: tokens[0][0]].strip(" \"'“‘(")
    gap = _gap(text, tokens, adverb - 1, adverb)
    return any(mark in gap for mark in ".!?;:,") or tokens[adverb - 1][2].lower() in _CONJUNCTIONS


def contraction_is_has(text: str, tokens: list[Token], index: int) -> bool:
    """For the *'s* after ``tokens[index]`` (he's, she's): True if it is *has*."""
    position = index + 2  # the clitic's "s" is a token of its own
    while position < len(tokens) and is_adverb(tokens[position][2].lower()):
        position += 1
    if position >= len(tokens):
        return False
    if position + 1 < len(tokens) and _gap(text, tokens, position, position + 1) == "-":
        position += 1  # "she's co-written": the participle is the last part
    lower = tokens[position][2].lower()
    if lower in HAS_PARTICIPLES:
        return True
    if lower.endswith(("ed", "en")) and position + 1 < len(tokens):
        return tokens[position + 1][2].lower() in _OBJECT_STARTERS - {"he", "she", "they"}
    return False


def coordinated_verbs(
    text: str,
    tokens: list[Token],
    verb: int,
    *,
    lists: bool = True,
    only_irregular: bool = False,
) -> list[int]:
    """Token indices of the later verbs that share the subject of ``tokens[verb]`` (rule 2
    of the module docstring).

    Args:
        text: The document.
        tokens: Its words.
        verb: The subject's first verb.
        lists: Also take a verb after a comma ("gets up, brushes her teeth"); False for a
            subject inside a subordinate clause ("after she was killed, follows the notes":
            the comma ends that clause).
        only_irregular: Take only *is/was/has/does* (after a past tense: "wanted to come but
            was tired"; a present *-s* word there is more often a noun).
    """
    found: list[int] = []
    position = verb + 1
    # After a past tense the auxiliary comes soon ("wanted to come but was"); a bound keeps
    # long sentences of past tenses (most of Wikipedia) cheap.
    last = len(tokens)
    if only_irregular:
        last = min(last, verb + _PAST_WINDOW)
        # (the loop may take a verb right after the window's last "and": search to it)
        if position >= last:
            return found
        start, end = tokens[position][0], tokens[min(last, len(tokens) - 1)][1]
        if (
            text.find(" and ", start, end) < 0
            and text.find(" but ", start, end) < 0
            and text.find(" or ", start, end) < 0
        ) or not _IRREGULAR_WORD.search(text, start, end):
            return found
    while position < last:
        gap = _gap(text, tokens, position - 1, position)
        if gap != " " and not _CLAUSE_PUNCTUATION.isdisjoint(gap):
            break
        lower = tokens[position][2].lower()
        if lower in CLAUSE_ENDS or (
            lower in _SUBJECTS and not _object_pronoun(text, tokens, position)
        ):
            break
        if lower in _CONJUNCTIONS:
            candidate = verb_after(text, tokens, position)
            if (
                candidate is not None
                and (not only_irregular or tokens[candidate][2].lower() in IRREGULAR)
                and _is_coordinated_verb(text, tokens, position, candidate, (verb, *found))
            ):
                found.append(candidate)
                position = candidate + 1
                continue
        elif (
            lists and not only_irregular and gap == ", " and _is_listed_verb(text, tokens, position)
        ):
            found.append(position)  # "gets up, brushes her teeth and leaves"
        position += 1
    return found


def _object_pronoun(text: str, tokens: list[Token], position: int) -> bool:
    """True for an *it* or *you* that is the object before a conjunction ("fixes it and
    goes", "finish it and needs"), not the subject of a clause of its own."""
    if tokens[position][2].lower() not in ("it", "you") or position + 1 >= len(tokens):
        return False
    return (
        _gap(text, tokens, position, position + 1) == " "
        and tokens[position + 1][2].lower() in _CONJUNCTIONS
        and position > 0
        and tokens[position - 1][2].lower() not in _CONJUNCTIONS
    )


def _is_listed_verb(text: str, tokens: list[Token], position: int) -> bool:
    """After a comma: a lower-case third-person verb followed by an article, a possessive
    or an object pronoun ("makes his lunch, locks the door"); not a capitalised word (a
    name: "Hermes"), nor one before a preposition ("Dotty, names that", "founders of")."""
    word = tokens[position][2]
    if not word.islower() or word in IRREGULAR or plural_verb(word) is None:
        return False
    if position + 1 >= len(tokens) or _gap(text, tokens, position, position + 1) != " ":
        return False
    return tokens[position + 1][2].lower() in _LIST_OBJECTS


def _is_coordinated_verb(
    text: str,
    tokens: list[Token],
    conjunction: int,
    candidate: int,
    verbs: tuple[int, ...] = (),
) -> bool:
    lower = tokens[candidate][2].lower()
    if lower in IRREGULAR:
        return True  # "is", "has", "doesn't" are verbs whatever follows
    if plural_verb(lower) is None:
        return False
    if candidate + 1 >= len(tokens) or _gap(text, tokens, candidate, candidate + 1).strip():
        return False
    following = tokens[candidate + 1][2].lower()
    if following in _OBJECT_STARTERS:
        return True
    before = tokens[conjunction - 1][2].lower() if conjunction else ""
    if conjunction - 1 not in verbs and before.endswith("s") and plural_verb(before) is not None:
        return False  # "cats and dogs in the garden": two plural nouns
    return following in OBJECT_FOLLOWERS or is_adverb(following)
