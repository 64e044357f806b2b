"""Informal-text cues for *his* and *her* in gender-neutral rewriting (issue 36).

The binary rules (cdsbias.cds.languages.en_pronouns) were tuned on Wikipedia (GAP); tweets,
chat and forum text put other things after a pronoun. Neutral rewriting
(cdsbias.cds.languages.en_neutral) asks these functions first and falls back on the
binary rules where they have nothing to say. Binary CDS does not use them, so its output
stays what it was (its swap would often read as well either way: *him*/*his*).

*his* is a determiner (-> *their*, not *theirs*) before:

* an opening quote and a word (*his 'type'*, *his "heart"*), also after a degree word
  (*his most "famous" song*);
* a capitalised or all-capitals word inside a sentence (*his Mom*, *his GUTS*), when *his*
  itself is in lower case (not a title: *The Choice Is His To Make*);
* a degree word that is also a noun, where nothing follows it that it could modify
  (``noun_degree_words``: *behind his back.*, *did his best*, *gave it his all*).

*her* is an object (-> *them*, not *their*) before:

* a mark that cannot open a noun phrase: a hashtag (*told her #truestory*), an ellipsis
  (*her…*), an emoji or other symbol; not a digit, a currency, *#1* or an opening quote;
* an informal particle (``informal_particles``: *texted her lol*) or a past tense that is
  seldom an adjective (``object_past_verbs``: *my love for her reached*);
* an adverb without -ly (``informal_adverbs``: *hug her tight*) or a day or time
  (``time_words``: *see her sunday*, *met her Tuesday at*) that no content word follows
  (*her tight schedule*, *her best friend*, *her Sunday best* are possessives);
* after *make/let/help/see/watch/...* (en_pronouns' bare-verb governors), a word followed by an
  object pronoun (*make her regret it*, *let her have them*): a bare verb (not before a
  determiner: *made her bed the night before*);
* an all-capitals word, which is decided as if it were written in lower case (*feed her
  WELL*, *told her NOTHING*: "well" and "nothing" make "her" an object).

*her* before a quote is an object only after a naming verb (*called her 'mom'*); elsewhere
the quote opens her noun (*loved her 'little' speech*: possessive).
"""

from __future__ import annotations

from cdsbias.cds.languages.en_pronouns import (
    BARE_VERB_GOVERNORS,
    DEGREE_WORDS,
    OBJECT_FOLLOWERS,
    POSSESSIVE_FOLLOWERS,
    her_is_possessive,
)
from cdsbias.cds.wordlists import load_word_sets, resource_path

_WORDS = load_word_sets(resource_path("en_neutral.txt"))
INFORMAL_PARTICLES = _WORDS["informal_particles"]
INFORMAL_ADVERBS = _WORDS["informal_adverbs"]
TIME_WORDS = _WORDS["time_words"]
NOUN_DEGREE_WORDS = _WORDS["noun_degree_words"]
NAMING_VERBS = _WORDS["naming_verbs"]
OBJECT_PAST_VERBS = _WORDS["object_past_verbs"]

_CUE_WORDS = INFORMAL_PARTICLES | OBJECT_PAST_VERBS | INFORMAL_ADVERBS | TIME_WORDS

Token = tuple[int, int, str]
_QUOTES = "'\"‘“"
_CURRENCY = "$£€¥"
_SENTENCE_ENDS = ".!?"


def _opening_quote(gap: str, following: str) -> bool:
    """True if ``gap`` is spaces and an opening quote right before the word ``following``."""
    stripped = gap.strip()
    return (
        bool(following)
        and gap[:1].isspace()
        and stripped != ""
        and (all(char in _QUOTES for char in stripped) and gap.endswith(stripped))
    )


def _neighbours(text: str, tokens: list[Token], index: int) -> tuple[str, str, str, str, str]:
    """(previous word, gap after, next word, gap after next, word after next)."""
    start, end, _ = tokens[index]
    previous = ""
    if index and not text[tokens[index - 1][1] : start].strip():
        previous = tokens[index - 1][2]
    if index + 1 < len(tokens):
        gap_after, following = text[end : tokens[index + 1][0]], tokens[index + 1][2]
    else:
        gap_after, following = text[end:], ""
    gap_after_next, after_next = "", ""
    if index + 2 < len(tokens):
        gap_after_next = text[tokens[index + 1][1] : tokens[index + 2][0]]
        after_next = tokens[index + 2][2]
    elif index + 1 < len(tokens):
        gap_after_next = text[tokens[index + 1][1] :]
    return previous, gap_after, following, gap_after_next, after_next


def _inside_sentence(text: str, start: int) -> bool:
    # A few characters are enough to find the mark before (and keep long texts linear).
    before = text[max(0, start - 40) : start].rstrip().rstrip(_QUOTES + "(")
    return bool(before) and before[-1] not in _SENTENCE_ENDS


def his_is_determiner(text: str, tokens: list[Token], index: int) -> bool:
    """True when the cues of the module docstring make ``tokens[index]`` (*his*) a
    determiner; False leaves the decision to the binary rules."""
    _, gap_after, following, gap_after_next, after_next = _neighbours(text, tokens, index)
    if not following:
        return False
    if _opening_quote(gap_after, following):
        return True  # his 'type'
    if gap_after.strip():
        return False
    lower = following.lower()
    if following[:1].isupper() and following != "I":
        # "his Mom", "his GUTS"; but not in a title ("The Choice Is His To Make").
        if tokens[index][2] == "his":
            return _inside_sentence(text, tokens[index + 1][0]) or following.isupper()
        return tokens[index][2] == "HIS" and following.isupper()
    if lower in DEGREE_WORDS and _opening_quote(gap_after_next, after_next):
        return True  # his most "famous" song
    if lower in NOUN_DEGREE_WORDS:
        # "behind his back.", "did his best", "his all for": nothing the word could modify.
        return (
            not after_next or bool(gap_after_next.strip()) or after_next.lower() in OBJECT_FOLLOWERS
        )
    return False


def her_is_object(text: str, tokens: list[Token], index: int) -> bool | None:
    """The cues of the module docstring for ``tokens[index]`` (*her*): True (object), False
    (possessive) or None (no cue: the binary rules decide)."""
    if index + 1 < len(tokens):
        # Most "her" are followed by a space and a lower-case word no cue knows: no cue.
        following = tokens[index + 1][2]
        if (
            following.islower()
            and following not in _CUE_WORDS
            and text[tokens[index][1] : tokens[index + 1][0]] == " "
            and (not index or tokens[index - 1][2].lower() not in BARE_VERB_GOVERNORS)
        ):
            return None
    previous, gap_after, following, gap_after_next, after_next = _neighbours(text, tokens, index)
    previous_lower = previous.lower()
    mark = gap_after.strip()[:1]
    if mark:
        if mark in _QUOTES and _opening_quote(gap_after, following):
            return previous_lower in NAMING_VERBS  # "called her 'mom'" / "her 'little' speech"
        if mark.isdigit() or mark in _CURRENCY or mark in "([`":
            return None
        if mark == "#":
            rest = gap_after.strip()[1:2]
            return not rest.isdigit() if rest else True  # "#1 fan" vs "#truestory"
        if mark.isalnum():
            return None
        return True if mark not in ",.;:!?)]}\"'-–—/" else None  # "her…", "her 😂"
    if not following:
        return None
    lower = following.lower()
    if lower in INFORMAL_PARTICLES or lower in OBJECT_PAST_VERBS:
        return True
    if lower in INFORMAL_ADVERBS or lower in TIME_WORDS:
        # "hug her tight", "see her sunday", "met her Tuesday at"; but "her tight schedule",
        # "her best friend", "her Sunday best": a content word after them is her noun.
        if gap_after_next.strip() == "-":
            return False  # "her best-selling album": a compound adjective
        return (
            not after_next
            or bool(gap_after_next.strip())
            or after_next.lower() in OBJECT_FOLLOWERS
            or after_next.lower() in TIME_WORDS
        )
    if len(following) > 1 and following.isupper():
        # An all-capitals word is decided as if it were written in lower case.
        return not her_is_possessive(
            previous,
            gap_after,
            lower,
            gap_after_next,
            after_next.lower() if after_next.isupper() else after_next,
        )
    if (
        previous_lower in BARE_VERB_GOVERNORS
        and lower not in POSSESSIVE_FOLLOWERS
        and gap_after_next == " "
        and after_next.lower() in _OBJECTS
    ):
        return True  # "make her regret it", "watch her eat the cake"
    return None


# A bare verb's object: "make her regret it", "let her have them". Pronouns only: after a
# determiner the word is as often her noun ("made her bed the night before").
_OBJECTS = frozenset(
    {"it", "them", "me", "us", "you", "him", "everything", "something", "anything"}
    | {"nothing", "everyone", "everybody", "someone", "somebody"}
)
