"""English surface rules for substituting the words of a bias axis (race, religion, a user's).

bias-bench swaps whitespace tokens and nothing else. These rules make the counterfactual
read as English; every rule looks only at the neighbouring words (the surname rule also
searches the document for the word after a given name), so it is fast enough for
a streamed corpus and the same on every machine. Each rule is checked by the gold sets
(``tests/assets/cds/gold_en_axes*.tsv``, docs/axes.md).

1. **Which tuple** (adjective vs noun use). A word listed in several tuples of its group
   (religion's "muslim" is in the adjective tuple muslim/jewish and the noun tuple
   muslim/jew) takes its counterparts from the tuple whose ``form`` fits its use here:
   *noun use* when no content word follows it and a determiner (``a``, ``the``, ``every``
   ...) stands at most two words before it ("a Muslim.", "a devout Muslim and"); otherwise
   *adjective use* ("a Muslim woman", "he is Muslim"). No fitting form: the first tuple.
2. **People only, for colour words.** A word in :data:`COLOUR_WORDS` ("black", "white") is
   substituted only where it describes people: before a person noun (:data:`PERSON_NOUNS`,
   also possessive: "the white woman's car"), possibly through a coordination of other axis
   words or names of peoples ("black and Asian students", "Black and Hispanic workers");
   after a people cue (:data:`PEOPLE_CUES`: "a historically black college", "an all-white
   jury"); as the plural people noun itself
   ("blacks", "whites", except after "egg"); *predicatively* of a person subject
   (:func:`predicative_of_person`: "he was white", "Boris is black", "the voters were mostly
   black", not "the wall was white" nor "white with fear"); and *as a noun* after a singular
   determiner with no noun after it (:func:`nominal_use`: "as a white,", "the only black in").
   So "white wine", "black coffee", "the White House", "black hole" stay; capitalisation
   does not count ("White House" is a house, "Mr White" a surname).
3. **Names are left alone.** A capitalised axis word that is part of a proper name keeps
   its form: followed by a place head (:data:`PLACE_HEADS`: "Church Street", "Mosque
   Road"), preceded by "St"/"Saint" or (a building or book word) by a capitalised non-axis
   word that does not start the sentence ("St Mary's Church", "Grace Church"), a building or
   book word followed by "of" and a capitalised word ("the Church of England"; a people word
   there is not a name: "the Christians of Quilon"); and a capitalised adjective *or noun*
   directly before a capitalised word (a title before a name: "Rabbi Moishe Sternbuch";
   "Christian Bale", "Jewish Museum"), unless that capitalised run names a person
   (:func:`capitalised_run_names_person`: "Jewish District Attorney", "Muslim Emperors",
   "the Danish-Jewish Henriques family", an adjective before a given name: "Jewish Adam").
   Ordinals are one word ("1st"), so "the 1st Muslim mayor" is not read as "St Muslim". A
   capitalised colour word that the document puts after a given name or title is a surname
   throughout it (:func:`used_as_surname`: "Brady Victor Black ... The Black family").
4. **a/an** before a substituted word follows the new word's first sound ("an Asian man"
   -> "a Black man", "a rabbi" -> "an imam"); the article keeps its case.
5. **Case.** The substitute takes the original's case pattern (MUSLIM -> JEWISH, Muslim ->
   Jewish); a proper word (:data:`PROPER_WORDS`: English capitalises names of peoples,
   religions, their books and places) is capitalised even where the original was written
   in lower case ("a black man" -> "an Asian man").
6. **Possessives** ("Muslim's", "Christians'") keep their ending; number is kept by the
   tuples (a plural's counterparts are plurals).

Known limits (docs/axes.md): race adjectives other than colours ("Asian food") are
substituted as bias-bench does; a person noun further than one coordination away is not
seen ("a black, well-dressed man" stays); the subject of a predicative colour word is the
word right before the verb ("everybody in the room was black" stays), and "they" is read
as people ("they were white" changes even when said of walls).
"""

from __future__ import annotations

import re
from functools import cache

from cdsbias.cds.wordlists import load_name_pairs, load_word_sets, resource_path

# The context words are data: en_axis_words.txt, one [section] each (a rule names its set).
_WORDS = load_word_sets(resource_path("en_axis_words.txt"))


#: Axis words whose everyday sense is not about people: substituted only before a person
#: noun or as plural people nouns (rule 2).
COLOUR_WORDS = _WORDS["colour_words"]
#: Plural colour words that still are colours after these words ("egg whites").
COLOUR_PLURAL_BLOCKERS = _WORDS["colour_plural_blockers"]

#: Nouns that name people: after a colour word they make it a race word (rule 2) and after
#: a capitalised axis word they show it is not a name (rule 3).
PERSON_NOUNS = _WORDS["person_nouns"]

#: Titles that name a person after a capitalised axis word ("the Muslim Kings of Judah",
#: rule 3) but not after a colour word, where they are also chess pieces and rulers
#: ("the white king", "a white ruler").
TITLE_NOUNS = _WORDS["title_nouns"]

#: Nouns after which a capitalised word is a surname ("the Henriques family", rule 3).
FAMILY_NOUNS = _WORDS["family_nouns"]
#: Axis words that are also given names: before a capitalised word they start a person's
#: name ("Christian Bale", "Christian August"), whatever that word is.
GIVEN_NAME_AXIS_WORDS = _WORDS["given_name_axis_words"]

#: Adverbs and prefixes after which a colour word is about people whatever follows it
#: ("a historically black college", "an all-white jury", "a majority-black district").
PEOPLE_CUES = _WORDS["people_cues"]

#: Subjects that are people: a colour word said of them is a race word ("he was white").
#: "it", "this", "which" are not; "they" is read as people (a known limit).
PERSON_PRONOUNS = _WORDS["person_pronouns"]
#: The verbs that make a following colour word predicative (a state, not a change:
#: "he turned white" is a face going pale).
COPULAS = _WORDS["copulas"]
#: Words that may stand between a subject and its verb, or a verb and the colour word
#: ("he was not white", "they were mostly black", "she will be white").
PREDICATE_FILLERS = _WORDS["predicate_fillers"]
#: After these a predicative colour word is a colour: "white with fear", "black as night".
COLOUR_SIMILES = _WORDS["colour_similes"]
#: Singular determiners after which a colour word with no noun after it is a person
#: ("as a white", "another black"); "the" counts only with :data:`NOMINAL_AFTER_THE`.
NOMINAL_DETERMINERS = _WORDS["nominal_determiners"]
NOMINAL_AFTER_THE = _WORDS["nominal_after_the"]
#: Words before the determiner that make the colour noun a person ("like a white").
NOMINAL_LICENCES = _WORDS["nominal_licences"]
#: Auxiliaries after which a determiner + colour noun is a subject ("a black would say").
SUBJECT_VERBS = _WORDS["subject_verbs"]
#: Titles before which a capitalised word is a name (rule 3: "Mr White" is a person).
NAME_TITLES = _WORDS["name_titles"]

#: Axis words that are building or book words: only these are part of a name before
#: "of" + a capitalised word ("the Church of England", not "the Christians of Quilon").
NAME_OF_FORMS = frozenset({"other", None})

#: Words that end a proper name of a place or an institution (rule 3).
PLACE_HEADS = _WORDS["place_heads"]

#: Determiners that make a following axis word with no content word after it a noun
#: (rule 1).
DETERMINERS = _WORDS["determiners"]

#: Closed-class words: when one follows an axis word, no noun does (rule 1).
FUNCTION_WORDS = _WORDS["function_words"]

#: English capitalises the names of peoples, nationalities, religions, their scriptures
#: and places (rule 5); includes words beyond the shipped tuples for users' files.
PROPER_WORDS = _WORDS["proper_words"]

#: Word starts spelt with a vowel letter but said with a consonant ("a European"), and the
#: reverse ("an hour").
_A_BEFORE = re.compile(r"(?:eu|uni|use|usu|uti|one|once|ure)", re.IGNORECASE)
_AN_BEFORE = re.compile(r"(?:hour|honest|honou?r|heir)", re.IGNORECASE)

#: Derivational endings after which a word built on a listed stem "looks like an axis
#: word" ("Islamic", "Judaic", "Islamist", "whiteness"), for the report (not substituted).
DERIVATION_SUFFIXES = (
    "ic", "ics", "ism", "isms", "ist", "ists", "ite", "ites", "ity", "ness", "dom", "ian",
    "ians", "ish", "ese", "tic", "an", "ans", "s", "es", "ry", "ize", "ized", "ise", "ised",
)  # fmt: skip
#: Endings removed from a listed word to get the stem those suffixes attach to.
STEM_ENDINGS = ("ianity", "ism", "ity", "ish", "ian", "ians", "es", "s", "a", "e")


def article_for(word: str) -> str:
    """``"an"`` when ``word`` starts with a vowel sound, else ``"a"`` (rule 4)."""
    if _AN_BEFORE.match(word):
        return "an"
    if _A_BEFORE.match(word):
        return "a"
    return "an" if word[:1].lower() in "aeiou" else "a"


def cased(original: str, replacement: str) -> str:
    """``replacement`` in ``original``'s case, proper words capitalised (rule 5).

    Args:
        original: The word as written in the text.
        replacement: The lower-case substitute.
    """
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper() or replacement in PROPER_WORDS:
        return replacement[:1].upper() + replacement[1:]
    return replacement


def stems(words: frozenset[str]) -> frozenset[str]:
    """The stems of listed words that derivations are built on (``judaism`` -> ``juda``)."""
    found = set()
    for word in words:
        found.add(word)
        for ending in STEM_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 4:
                found.add(word[: -len(ending)])
    return frozenset(stem for stem in found if len(stem) >= 4)


def looks_like_axis_word(word: str, listed: frozenset[str], stem_set: frozenset[str]) -> bool:
    """Whether lower-case ``word`` is a derivation of a listed word but not listed itself.

    A word is flagged when it is a stem of a listed word plus one ending of
    :data:`DERIVATION_SUFFIXES` ("islamic" = "islam" + "ic"); compounds ("whiteboard")
    are not, so the list stays short and honest.
    """
    if word in listed:
        return False
    for suffix in DERIVATION_SUFFIXES:
        if word.endswith(suffix) and word[: -len(suffix)] in stem_set:
            return True
    return False


def _bare(word: str) -> str:
    """``word`` in lower case without a possessive ending, curly apostrophes made straight."""
    low = word.lower().replace("’", "'")
    if low.endswith("'s"):
        return low[:-2]
    return low[:-1] if low.endswith("'") and len(low) > 1 else low


def _is_filler(word: str) -> bool:
    """Whether ``word`` may stand between a subject, its verb and a predicative colour word:
    :data:`PREDICATE_FILLERS` or an adverb in -ly ("legally white", "three-quarters white")."""
    low = _bare(word)
    return low in PREDICATE_FILLERS or (len(low) > 4 and low.endswith("ly"))


def _is_content(word: str) -> bool:
    """Whether ``word`` is a content word (a noun, verb or adjective may be)."""
    return word[:1].isalnum() and _bare(word) not in FUNCTION_WORDS


@cache
def given_names() -> frozenset[str]:
    """The given names of the shipped name pairs, lower case (``name_pairs.tsv``)."""
    return frozenset(name.lower() for name in load_name_pairs())


def subject_is_person(words: list[str], index: int) -> bool:
    """Whether ``words[index]``, the word before a verb, names a person: a personal pronoun,
    a person noun, a given name, or a capitalised word after a given name or a title
    ("John Carter", "Mr. Okafor")."""
    word = words[index]
    low = _bare(word)
    if low in PERSON_PRONOUNS or low in PERSON_NOUNS:
        return True
    if not word[:1].isupper():
        return False
    if low in given_names():
        return True
    previous = [_bare(w) for w in words[max(0, index - 2) : index] if w != "."]
    return bool(previous) and (previous[-1] in given_names() or previous[-1] in NAME_TITLES)


def used_as_surname(word: str, text: str) -> bool:
    """Rule 3: whether capitalised ``word`` follows a given name or a title somewhere in
    ``text`` ("Brady Victor Black", "Mr. White"): then it is a surname throughout that
    document ("The Black family's happiness"), as cdsbias.cds.languages.en_names keeps a
    surname consistent in a document."""
    for found in re.finditer(rf"\b([A-Z][^\W\d_]*)\.?\s+{re.escape(word)}\b", text):
        previous = found.group(1).lower()
        if previous in given_names() or previous in NAME_TITLES:
            return True
    return False


def predicative_of_person(before: list[str], after: list[str]) -> bool:
    """Rule 2: a colour word said of a person subject ("he was white", "Boris is black",
    "his mother was not white", "the voters there were mostly black").

    Args:
        before: The words before the colour word, nearest last.
        after: The words after it, nearest first.

    The verb must be a copula (:data:`COPULAS`; "he turned white" is pale), nothing
    noun-like may follow ("white hot", "white-haired") and no simile ("white with fear",
    "black as night").
    """
    if after and (_bare(after[0]) in COLOUR_SIMILES or _is_content(after[0]) or after[0] == "-"):
        return False  # "white with fear", "white hot", "white-haired"
    index = len(before) - 1
    while index >= 0 and _is_filler(before[index]):
        index -= 1
    if index < 0:
        return False
    contracted = before[index].lower().replace("’", "'")
    if "'" in contracted and contracted in PERSON_PRONOUNS:  # "he's white", "they're black"
        return True
    verb = _bare(before[index])
    if verb not in COPULAS:
        # A question puts the verb first: "Is he black?", "Were they white?"
        inverted = index >= 1 and _bare(before[index - 1]) in COPULAS
        return inverted and _bare(before[index]) in PERSON_PRONOUNS
    index -= 1
    while index >= 0 and _is_filler(before[index]):
        index -= 1
    return index >= 0 and subject_is_person(before, index)


def nominal_use(before: list[str], after: list[str], axis_words: frozenset[str]) -> bool:
    """Rule 2: a colour word used as a noun for a person ("as a white,", "the only black in
    his class", "a white and a black", "a white, a black and an Asian walked in").

    A singular determiner (:data:`NOMINAL_DETERMINERS`, or "the" + :data:`NOMINAL_AFTER_THE`)
    stands right before it, no noun follows it (unless it closes a coordination of such
    nouns), and something says it is a person: "as" before the determiner, a copula with a
    person subject ("he was the only black"), "the only/first/...", a coordination of such
    nouns, "every", "like"/"of" before the determiner, an auxiliary after it ("a black would
    say"), or the start of the sentence. As the object of another verb it is kept:
    "ordered a white" (wine) and "married a black" cannot be told apart without a verb
    lexicon.
    """
    if not before:
        return False
    determiner = _bare(before[-1])
    if determiner in NOMINAL_DETERMINERS:
        index, licensed = len(before) - 2, False
    elif determiner in NOMINAL_AFTER_THE and len(before) > 1 and _bare(before[-2]) == "the":
        index, licensed = len(before) - 3, True
    else:
        return False
    following = _bare(after[0]) if after else ""
    if following == "-":
        return False  # a compound: "as a white-collar worker"
    coordinated = (
        index >= 1
        and _bare(before[index]) in ("and", "or", ",")
        and _bare(before[index - 1]) in axis_words
    )
    if following in ("and", "or"):
        if len(after) < 2 or _bare(after[1]) not in NOMINAL_DETERMINERS | {"the"}:
            return False  # "a black and white photo"
        coordinated = True
    elif following == "of" or (following and _is_content(following) and not coordinated):
        return False
    filler = index
    while filler >= 0 and _is_filler(before[filler]):
        filler -= 1
    if filler >= 0 and _bare(before[filler]) in COPULAS:
        filler -= 1
        while filler >= 0 and _is_filler(before[filler]):
            filler -= 1
        return filler >= 0 and subject_is_person(before, filler)
    starts_sentence = index < 0 or before[index] in (".", "!", "?", ";", ":", '"')
    return (
        licensed
        or coordinated
        or starts_sentence
        or determiner == "every"
        or following in SUBJECT_VERBS
        or (index >= 0 and _bare(before[index]) in NOMINAL_LICENCES)
    )


def after_people_cue(before: list[str]) -> bool:
    """Rule 2: a colour word after a people cue ("historically black", "all-white")."""
    if not before:
        return False
    last = _bare(before[-1])
    if last == "-" and len(before) > 1:
        return _bare(before[-2]) in PEOPLE_CUES
    return last in PEOPLE_CUES and last != "all"  # "all white" is also "the walls were all white"


def starts_place_name(after: list[str]) -> bool:
    """Rule 3: whether the words after a capitalised axis word start with a capitalised
    place head ("Church Street", "Jewish Museum") that is not part of a title
    ("Jewish District Attorney")."""
    if not after or not after[0][:1].isupper() or after[0].lower() not in PLACE_HEADS:
        return False
    title = len(after) > 1 and after[1][:1].isupper() and _bare(after[1]) in PERSON_NOUNS
    return not title


def capitalised_run_names_person(
    axis_word: str, after: list[str], axis_words: frozenset[str], adjective: bool
) -> bool:
    """Rule 3: whether the capitalised words after a capitalised axis word name a person,
    so the axis word describes that person rather than starting a name.

    Args:
        axis_word: The axis word, lower case.
        after: The words after it; the first is capitalised.
        axis_words: The axis's words.
        adjective: Whether the axis word is used as an adjective (a given name after it
            is the person it describes: "Jewish Adam"; after a title it is the title's
            bearer: "Rabbi Levi Cohen").

    A person noun or another axis word right after it names a person ("Muslim women",
    "African American"); so does a run of capitalised words whose last word (the head of
    the phrase) is a person or title noun ("Jewish District Attorney", "Muslim Emperors",
    but "the Asian Patent Attorneys Association" is a name) and a surname before a family
    noun ("the Danish-Jewish Henriques family"). A run ending in a possessive owns what
    follows ("Christian Bale's film"); an axis word that is itself a given name starts one
    ("Christian August").
    """
    first = _bare(after[0])
    if first in PERSON_NOUNS or first in axis_words:
        return True
    run: list[str] = []
    for token in after[:5]:
        if not (token[:1].isupper() and token[:1].isalpha()):
            break
        run.append(token)
        if _bare(token) != token.lower().replace("’", "'"):  # a possessive ends the run
            return False
    head = _bare(run[-1])
    if head in PERSON_NOUNS or head in TITLE_NOUNS:
        return True
    if axis_word in GIVEN_NAME_AXIS_WORDS:
        return False
    if adjective and first in given_names():
        return True
    following = after[len(run)] if len(after) > len(run) else ""
    return len(run) <= 2 and _bare(following) in FAMILY_NOUNS
