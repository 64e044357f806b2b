"""English surface rules for substituting the words of a bias axis (race, religion, a user's).

bias-bench swaps whitespace tokens and nothing else. These rules make the counterfactual
read as English; every rule looks only at the neighbouring words, so it is fast enough for
a streamed corpus and the same on every machine. Each rule is checked by the gold sets
(``cdsbias/resources/axes/gold_en_axes_*.tsv``, docs/axes.md).

1. **Which tuple** (adjective vs noun use). A word listed in several tuples of its group
   (religion's "muslim" is in the adjective tuple muslim/jewish and the noun tuple
   muslim/jew) takes its counterparts from the tuple whose ``form`` fits its use here:
   *noun use* when no content word follows it and a determiner (``a``, ``the``, ``every``
   ...) stands at most two words before it ("a Muslim.", "a devout Muslim and"); otherwise
   *adjective use* ("a Muslim woman", "he is Muslim"). No fitting form: the first tuple.
2. **People only, for colour words.** A word in :data:`COLOUR_WORDS` ("black", "white") is
   substituted only where it describes people: before a person noun (:data:`PERSON_NOUNS`),
   possibly through a coordination of other axis words ("black and Asian students"), or as
   the plural people noun itself ("blacks", "whites", except after "egg"). So "white wine",
   "black coffee", "the White House", "black hole" stay; capitalisation does not count
   ("White House" is a house, "Mr White" a surname).
3. **Names are left alone.** A capitalised axis word that is part of a proper name keeps
   its form: followed by a place head (:data:`PLACE_HEADS`: "Church Street", "Mosque
   Road"), preceded by "St"/"Saint" or by a capitalised non-axis word that does not start
   the sentence ("St Mary's Church", "Grace Church"), or followed by "of" and a capitalised
   word ("the Church of England"); and a capitalised adjective directly before a capitalised
   word that is neither a person noun nor an axis word ("Christian Bale", "Jewish Museum").
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
seen ("a black, well-dressed man" stays).
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``."""
    return frozenset(text.split())


#: Axis words whose everyday sense is not about people: substituted only before a person
#: noun or as plural people nouns (rule 2).
COLOUR_WORDS = frozenset({"black", "white", "blacks", "whites", "brown", "yellow", "red"})
#: Plural colour words that still are colours after these words ("egg whites").
COLOUR_PLURAL_BLOCKERS = frozenset({"egg", "eggs"})

#: Nouns that name people: after a colour word they make it a race word (rule 2) and after
#: a capitalised axis word they show it is not a name (rule 3).
PERSON_NOUNS = _words(
    """
    man men woman women person persons people boy boys girl girls child children kid kids
    baby babies guy guys lady ladies gentleman gentlemen male males female females adult
    adults teen teens teenager teenagers youth youths folk folks family families community
    communities population populations neighbour neighbours neighbor neighbors neighbourhood
    neighborhood friend friends couple couples parent parents mother mothers father fathers
    son sons daughter daughters brother brothers sister sisters wife wives husband husbands
    student students pupil pupils teacher teachers professor professors doctor doctors nurse
    nurses patient patients worker workers employee employees colleague colleagues boss
    bosses manager managers officer officers cop cops police policeman policemen soldier
    soldiers lawyer lawyers judge judges voter voters citizen citizens resident residents
    immigrant immigrants refugee refugees migrant migrants leader leaders politician
    politicians candidate candidates president senator actor actors actress actresses
    artist artists writer writers author authors musician musicians singer singers rapper
    rappers player players athlete athletes driver drivers customer customers client
    clients tenant tenants owner owners farmer farmers scholar scholars scientist
    scientists engineer engineers activist activists member members group groups
    individual individuals victim victims suspect suspects criminal criminals prisoner
    prisoners defendant defendants applicant applicants candidate americans american
    britons british europeans audience crowd congregation believers believer faithful
    converts convert minority minorities majority neighbourhoods neighborhoods people's
    """
)

#: Words that end a proper name of a place or an institution (rule 3).
PLACE_HEADS = _words(
    """
    street st road rd lane avenue ave square place hill hall close way drive court gardens
    park school college university academy hospital museum centre center institute
    cathedral chapel abbey quarter district village town county bridge station
    """
)

#: Determiners that make a following axis word with no content word after it a noun
#: (rule 1).
DETERMINERS = _words(
    "a an the one every each another any no this that these those some many few several "
    "such his her their our my your its"
)

#: Closed-class words: when one follows an axis word, no noun does (rule 1).
FUNCTION_WORDS = _words(
    """
    a an the and or but nor so yet who whom whose which that what when where why how is
    was are were be been being am has have had do does did will would shall should can
    could may might must not in on at to from by with without for of about as than like
    into onto over under after before since until while because if though although he she
    it they we you i me him her them us his its their our your my this these those there
    here then also too very just only even still said says say
    """
)

#: English capitalises the names of peoples, nationalities, religions, their scriptures
#: and places (rule 5); includes words beyond the shipped tuples for users' files.
PROPER_WORDS = _words(
    """
    asian asians asia african africans africa caucasian caucasians europe european
    europeans american americans hispanic hispanics latino latinos latina latinas arab arabs
    arabic indian indians native jewish jew jews judaism christian christians christianity
    muslim muslims islam islamic hindu hindus hinduism sikh sikhs sikhism buddhist
    buddhists buddhism catholic catholics protestant protestants torah torahs bible bibles
    quran qurans koran talmud gospel gospels
    """
)

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
