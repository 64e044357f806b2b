"""Table-driven tests of the substitution engine (rule-based path)."""

from __future__ import annotations

import pytest

from cdsbias.cds import CounterfactualSubstituter, apply_edits, map_offset
from cdsbias.cds.engine import match_case


@pytest.fixture(scope="module")
def substituter() -> CounterfactualSubstituter:
    return CounterfactualSubstituter()


@pytest.fixture(scope="module")
def words_only() -> CounterfactualSubstituter:
    return CounterfactualSubstituter(names=False)


CASING = [
    ("he left", "she left"),
    ("He left", "She left"),
    ("HE LEFT", "SHE LEFT"),
    ("HIS book", "HER book"),
    ("His book", "Her book"),
    ("the King spoke", "the Queen spoke"),
    ("Mr. Smith", "Mrs. Smith"),
    ("Mrs Smith", "Mr Smith"),
    ("He went to McDonald's", "She went to McDonald's"),
    ("La MaMa theatre", "La MaMa theatre"),
    ("Miss Marple met Mister Rogers.", "Mister Marple met Miss Rogers."),
    ("She won Miss World 2011.", "He won Mister World 2011."),
    ("Ms Smith met Mrs Jones.", "Mr Smith met Mr Jones."),  # Ms -> Mr is one way
    ("the Marquis de Sade and the Marquise", "the Marquise de Sade and the Marquis"),
    ("Countess of *ttingen", "Count of *ttingen"),  # GAP writes non-ASCII letters as "*"
]

PUNCTUATION_AND_POSSESSIVES = [
    ("the king's crown", "the queen's crown"),
    ("the kings' crowns", "the queens' crowns"),
    ("He's here; she'd go.", "She's here; he'd go."),
    ("(his)", "(hers)"),
    ("sons, daughters and wives.", "daughters, sons and husbands."),
    ("“He said so,” she said.", "“She said so,” he said."),
    ("ma'am", "sir"),
]

HYPHENATED_AND_EMBEDDED = [
    ("his half-brother", "her half-sister"),
    ("a brother-in-law", "a sister-in-law"),
    ("the mason and the shepherd", "the mason and the shepherd"),
    ("a Hershey bar", "a Hershey bar"),
    ("manager of the herbarium", "manager of the herbarium"),
    ("Sonia's mandolin", "Sonia's mandolin"),
    ("Heroes and heroines", "Heroines and heroes"),
]

HER_PATTERNS = [
    ("She lost her book.", "He lost his book."),
    ("He saw her.", "She saw him."),
    ("I told her that it rained.", "I told him that it rained."),
    ("He gave her a book.", "She gave him a book."),
    ("with her own band", "with his own band"),
    ("her first album", "his first album"),
    ("a gift for her", "a gift for him"),
    ("He treated her badly", "She treated him badly"),
    ("her highly successful album", "his highly successful album"),
    ("met her later that year", "met him later that year"),
    ("in her later years", "in his later years"),
    ("brought her back to town", "brought him back to town"),
    ("her back injury", "his back injury"),
    ("He saw her perform", "She saw him perform"),
    ("She made her debut", "He made his debut"),
    ("They named her Mary", "They named him Mary"),
    ("her Broadway debut", "his Broadway debut"),
    ("her 1995 album", "his 1995 album"),
    ("she bore her three children", "he bore him three children"),
    ("they let her go", "they let him go"),
    ("it made her famous", "it made him famous"),
    ("He had her arrested", "She had him arrested"),
    ("her on-screen husband", "his on-screen wife"),
    ("called her ``a star''", "called him ``a star''"),
    ("Her father. Her.", "His mother. Him."),
    ("The book is hers.", "The book is his."),
    ("The book is his.", "The book is hers."),
    ("his and hers", "hers and his"),
    ("She hurt herself", "He hurt himself"),
    # Double objects: "her" + the thing given is an object; "she" as the subject, an -ing
    # form after the noun, or a genitive/possessive-only word keeps the possessive.
    ("He gives her advice that goes wrong.", "She gives him advice that goes wrong."),
    ("It earned her much respect.", "It earned him much respect."),
    ("It gave her great design responsibility.", "It gave him great design responsibility."),
    ("She offered her advice on wine.", "He offered his advice on wine."),
    ("He sent her gifts flying.", "She sent his gifts flying."),
    ("He taught her English class.", "She taught his English class."),
    ("He teaches her English.", "She teaches him English."),
    ("He gave her English lessons.", "She gave him English lessons."),
    ("They sold her music online.", "They sold his music online."),
    ("They started her training in Paris.", "They started his training in Paris."),
    ("on her one day off", "on his one day off"),
    ("It earned her Crump's support.", "It earned him Crump's support."),
    ("He sends her Dr. Elmo for therapy.", "She sends him Dr. Elmo for therapy."),
    ("to give her $700.", "to give him $700."),
    ("It took her five minutes.", "It took him five minutes."),
    ("he makes her breakfast", "she makes him breakfast"),
    ("She gave her all during her stint.", "He gave his all during his stint."),
    ("They gave her all the money.", "They gave him all the money."),
    ("She had borne her Gratian, whom", "He had borne him Gratian, whom"),
    # Object complements and appointments.
    ("They appointed her governor.", "They appointed him governor."),
    ("He made her Baroness Bryan in 1530.", "She made him Baron Bryan in 1530."),
    ("an article naming her one of the best", "an article naming him one of the best"),
    ("They ranked her first in the poll.", "They ranked him first in the poll."),
    ("He left her first husband.", "She left his first wife."),
    ("It would leave her unprotected.", "It would leave him unprotected."),
    ("to make her personally liable", "to make him personally liable"),
    ("He found her so agreeable", "She found him so agreeable"),
    ("considered her too close to them", "considered him too close to them"),
    # A verb right after "her" ends its noun phrase.
    ("The views of her became hateful.", "The views of him became hateful."),
    ("Pioneers like her created a new style.", "Pioneers like him created a new style."),
    ("It ends with her covered in paint.", "It ends with him covered in paint."),
    ("He called to her saying that he", "She called to him saying that she"),
    ("her asking price", "his asking price"),
    ("an opera for her entitled Peri", "an opera for him entitled Peri"),
    ("getting her smoking, is all", "getting him smoking, is all"),
    ("until he calls her one night", "until she calls him one night"),
    ("He spent her one night there", "She spent his one night there"),
    # Possessives.
    ("The camera. Her bubbly persona", "The camera. His bubbly persona"),
    ("In her will she said", "In his will he said"),
    ("In his will he said", "In her will she said"),
    ("Will her well of inspiration", "Will his well of inspiration"),
    ("which called his a ``sweet'' band", "which called hers a ``sweet'' band"),
]

# Expected texts name substitutes as {Name}: the partner of Name in the shipped name list.
NAMES = [
    ("Mary met John.", "{Mary} met {John}."),
    ("Then Bill paid the bill.", "Then {Bill} paid the bill."),
    ("Bill paid.", "Bill paid."),  # sentence-initial common word without a surname
    ("Will you call Will Smith?", "Will you call {Will} Smith?"),
    ("Harper Lee wrote it.", "Harper Lee wrote it."),
    ("Phoebe Thomas arrived. Thomas sat.", "{Phoebe} Thomas arrived. Thomas sat."),
    ("Mr. Thomas met Sir Thomas More.", "Mrs. Thomas met Dame {Thomas} More."),
    ("In May 2010 May Whitty sang.", "In May 2010 {May} Whitty sang."),
    ("Virginia is a state.", "Virginia is a state."),
    ("He visited Virginia Beach.", "She visited Virginia Beach."),
    ("at the 2008 Summer Olympics", "at the 2008 Summer Olympics"),
    ("in Monte-Carlo", "in Monte-Carlo"),
    ("Bishop George Halford", "Bishop {George} Halford"),
    ("Stephen King met the King.", "{Stephen} King met the Queen."),
    ("the Dean of Admissions", "the Dean of Admissions"),
    ("Mary and MARY and mary", "{Mary} and MARY and mary"),
    # A place name is not a surname: "Anne" is swapped elsewhere in the document.
    ("Anne sailed to Port Phillip. Anne stayed.", "{Anne} sailed to Port Phillip. {Anne} stayed."),
    ("John James designed St. Mary's Church.", "{John} James designed St. Mary's Church."),
    ("Norma's Academy, run by Norma Bell", "{Norma}'s Academy, run by {Norma} Bell"),
]

UNICODE = [
    ("Zoë’s brother met Émile’s sister.", "Zoë’s sister met Émile’s brother."),
    ("Ela é a mãe. He said so.", "Ela é a mãe. She said so."),
    ("Der König and the king", "Der König and the queen"),
    ("fiancé and fiancée", "fiancée and fiancé"),
    ("Him: 你好 her.", "Her: 你好 him."),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    CASING + PUNCTUATION_AND_POSSESSIVES + HYPHENATED_AND_EMBEDDED + HER_PATTERNS + UNICODE,
)
def test_word_and_pronoun_substitution(words_only, text, expected):
    assert words_only.substitute(text) == expected


@pytest.mark.parametrize(("text", "expected"), NAMES)
def test_given_names_only_where_used_as_given_names(substituter, text, expected):
    assert substituter.substitute(text) == expected.format_map(substituter.name_map)


def test_names_off_leaves_names(words_only):
    assert words_only.substitute("Mary met John.") == "Mary met John."


def test_name_swaps_are_consistent_within_a_document(substituter):
    text = "John met Mary. Later John thanked Mary, and Mary thanked John."
    out = substituter.substitute(text)
    expected = "{John} met {Mary}. Later {John} thanked {Mary}, and {Mary} thanked {John}."
    assert out == expected.format_map(substituter.name_map)
    assert substituter.name_map["John"] != "John"


@pytest.mark.parametrize(
    "text",
    [
        "He gave her his book, and she thanked him.",
        "The king's half-brother met Lady Adelaide and her husband.",
        "Mary Smith and John Brown met in May.",
        "Miss Honey gave him advice and made him breakfast.",
        "The Marquis de Lafayette earned him Crump's support.",
        "Anne went to Port Phillip; Anne stayed near St. Mary's Church.",
    ],
)
def test_substituting_twice_restores_the_text(substituter, text):
    assert substituter.substitute(substituter.substitute(text)) == text


@pytest.mark.parametrize(
    ("source", "replacement", "expected"),
    [("HIS", "her", "HER"), ("His", "her", "Her"), ("his", "her", "her"), ("I", "x", "X")],
)
def test_match_case(source, replacement, expected):
    assert match_case(source, replacement) == expected


def test_map_offset_tracks_length_changes(substituter):
    text = "He met her and his wife."
    edits = substituter.edits(text)
    new_text = apply_edits(text, edits)
    wife = text.index("wife")
    new_start = map_offset(edits, wife)
    new_end = map_offset(edits, wife + len("wife"), is_end=True)
    assert new_text[new_start:new_end] == "husband"
    # An offset inside a replaced word maps to the start of its replacement.
    assert map_offset(edits, 1) == 0
