"""cdsbias's n-ary CDA beside bias-bench's own loop, class by class.

bias-bench (Meade et al. 2022, ``experiments/run_mlm.py``) decodes each block of BERT
ids with ``tokenizer.decode`` and swaps whitespace tokens against its tuples
(``data/bias_attribute_words.json``) extended by ``_create_bias_attribute_words`` with
each word plus one of ``. , ? ! ; :``; for a word in several tuples the last tuple wins.
Its input is therefore the decode of an uncased BERT tokenizer: lower case, with
punctuation split off. Under transformers 4.16 (bias-bench's pin) ``decode`` cleans up
tokenization spaces by default, gluing ``. , ? !`` and ``'`` back onto the word before
("muslim's", "muslim''"); under transformers 5 (BERT's ``clean_up_tokenization_spaces``
is False; the WordPiece decoder still glues . , ? !) the apostrophe stays apart, so
bias-bench misses nothing its list names.

**Where the outputs are identical** (up to the capital that rule 5 gives proper words):
lower-case text whose axis words are bias-bench's own, used as adjectives, plurals or
building/book words, colour words only before a person noun, with no a/an before a word
whose counterpart starts with the other sound (``test_identical_on_the_stated_text``).
Everywhere else cdsbias departs, and each class of departure is tested below with
bias-bench's output beside cdsbias's. The draws are the same: bias-bench's r1, r2, r3
are cdsbias's group mapping ``[r1, r2, r3]``.
"""

from __future__ import annotations

import pytest
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer
from transformers import BertTokenizerFast

from cdsbias.axes import get_axis
from cdsbias.cds.axis_substitution import AxisSubstituter
from cdsbias.cds.edits import apply_edits

#: bias-bench's data/bias_attribute_words.json, "race" and "religion", as published.
BIAS_BENCH_TUPLES = {
    "race": [
        ["black", "caucasian", "asian"],
        ["african", "caucasian", "asian"],
        ["black", "white", "asian"],
        ["africa", "america", "asia"],
        ["africa", "america", "china"],
        ["africa", "europe", "asia"],
    ],
    "religion": [
        ["jewish", "christian", "muslim"],
        ["jews", "christians", "muslims"],
        ["torah", "bible", "quran"],
        ["synagogue", "church", "mosque"],
        ["rabbi", "priest", "imam"],
        ["judaism", "christianity", "islam"],
    ],
}
#: Every mapping bias-bench can draw for three groups (r1 in {1, 2}, r2 in {0, 2}, r3 in
#: {0, 1}).
DRAWS = [[r1, r2, r3] for r1 in (1, 2) for r2 in (0, 2) for r3 in (0, 1)]


def bias_bench_words(axis: str) -> list[list[str]]:
    """``_create_bias_attribute_words``: the tuples, then each with a punctuation mark glued."""
    words = BIAS_BENCH_TUPLES[axis]
    result = words[:]
    for punctuation in [".", ",", "?", "!", ";", ":"]:
        result.extend([word + punctuation for word in tuple_] for tuple_ in words)
    return result


def bias_bench_cda(sentence: str, draw: list[int], axis: str) -> str:
    """``ternary_counterfactual_augmentation``'s loop on one decoded sequence, draws given."""
    words = sentence.split()
    augmented_sentence = words[:]
    for position, word in enumerate(words):
        for augmentation_words in bias_bench_words(axis):
            for group in range(3):
                if augmentation_words[group] == word:
                    augmented_sentence[position] = augmentation_words[draw[group]]
    return " ".join(augmented_sentence)


def bert_decode(text: str, clean_up: bool) -> str:
    """What bias-bench's loop reads: ``text`` through an uncased BERT tokenizer and back
    (a word-level vocabulary of the text's own pieces, so nothing is [UNK])."""
    normalizer, pre_tokenizer = BertNormalizer(lowercase=True), BertPreTokenizer()
    pieces = sorted({p for p, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *pieces]
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=True)
    ids = tokenizer(text)["input_ids"]
    return tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=clean_up)


def cdsbias_cda(text: str, draw: list[int], axis: str) -> str:
    substituter = AxisSubstituter(get_axis(axis))
    return apply_edits(text, substituter.edits(substituter.analyse(text), draw))


def both(text: str, draw: list[int], axis: str, clean_up: bool = True) -> tuple[str, str]:
    """(bias-bench's counterfactual of ``text``'s decode, cdsbias's of ``text``)."""
    return bias_bench_cda(bert_decode(text, clean_up), draw, axis), cdsbias_cda(text, draw, axis)


# ------------------------------------------------------------------------------ identical
IDENTICAL = {
    "religion": [
        "the jewish community met the imam in the mosque",
        "many muslims read the quran every day",
        "the priest and the rabbi talked about judaism and islam",
        "christians built a church near the synagogue",
        "muslim families and jewish students shared the bible and the torah",
        "she said the muslims were welcome",
    ],
    "race": [
        "black students and white teachers met asian parents",
        "caucasian patients and african doctors",
        "he travelled from africa to asia and europe",
        "the black man met the white woman",
    ],
}


@pytest.mark.parametrize("axis", ["religion", "race"])
@pytest.mark.parametrize("clean_up", [True, False], ids=["transformers-4.16", "transformers-5"])
def test_identical_on_the_stated_text(axis, clean_up):
    for text in IDENTICAL[axis]:
        assert bert_decode(text, clean_up) == text
        for draw in DRAWS:
            theirs, ours = both(text, draw, axis, clean_up)
            assert ours.lower() == theirs, (text, draw)


# ---------------------------------------------------------------- departures, by class
MUSLIM_TO_JEWISH = [0, 2, 0]  # jewish -> christian, christian -> muslim, muslim -> jewish


def test_departure_possessives_and_double_quotes_only_under_transformers_4():
    """bias-bench's 4.16 decode glues "'s" and "''" on ("muslim's"), so it misses those;
    its punctuation list covers the glued . , ? ! and a split-off ( ) ; : is separate.
    Under transformers 5 its decode keeps the apostrophe apart and it misses nothing."""
    text = "the muslim's shop , ( muslim ) and muslim'' . muslim ; muslim ."
    assert (
        bert_decode(text, clean_up=True)
        == "the muslim's shop, ( muslim ) and muslim''. muslim ; muslim."
    )
    theirs, ours = both(text, MUSLIM_TO_JEWISH, "religion", clean_up=True)
    assert theirs == "the muslim's shop, ( jewish ) and muslim''. jewish ; jewish."
    # "the Muslim's" is a noun: its counterpart comes from the noun tuple (rule 1).
    assert ours == "the Jew's shop , ( Jewish ) and Jewish'' . Jewish ; Jewish ."
    theirs_5, _ = both(text, MUSLIM_TO_JEWISH, "religion", clean_up=False)
    assert theirs_5 == "the jewish ' s shop, ( jewish ) and jewish ' '. jewish ; jewish."


def test_departure_noun_use_takes_the_noun_tuple():
    theirs, ours = both("he is a muslim .", MUSLIM_TO_JEWISH, "religion")
    assert (theirs, ours) == ("he is a jewish.", "he is a Jew .")


def test_departure_a_and_an_follow_the_new_word():
    theirs, ours = both("an imam spoke", MUSLIM_TO_JEWISH, "religion")
    assert (theirs, ours) == ("an rabbi spoke", "a rabbi spoke")


def test_departure_case_is_kept_and_proper_words_capitalised():
    theirs, ours = both("A Muslim woman and the QURAN", MUSLIM_TO_JEWISH, "religion")
    assert (theirs, ours) == ("a jewish woman and the torah", "A Jewish woman and the TORAH")


def test_departure_colour_words_only_about_people():
    black_to_white = [1, 0, 0]
    theirs, ours = both("black coffee and a black hole", black_to_white, "race")
    assert (theirs, ours) == ("white coffee and a white hole", "black coffee and a black hole")
    # Predicative and nominal uses about a person change in both.
    theirs, ours = both("because he was black . as a black ,", black_to_white, "race")
    assert (theirs, ours) == (
        "because he was white. as a white,",
        "because he was white . as a white ,",
    )


def test_departure_names_are_kept():
    theirs, ours = both("St Mary's Church and Christian Bale", [2, 0, 0], "religion")
    assert theirs == "st mary's synagogue and jewish bale"
    assert ours == "St Mary's Church and Christian Bale"


def test_departure_tuples_changed_in_race_and_added_in_religion():
    """race.tsv drops america/china, maps caucasian to african and adds the plurals
    blacks/whites/asians (README there); religion adds the noun jew and the plurals of
    building, book and clergy words."""
    draw = [2, 2, 0]  # black -> asian, white -> asian, asian -> black
    theirs, ours = both("america and china and caucasian voters", draw, "race")
    assert theirs == "china and africa and asian voters"  # the last matching tuple wins
    assert ours == "america and china and Asian voters"
    theirs, ours = both("the blacks and the asians voted", draw, "race")
    assert (theirs, ours) == ("the blacks and the asians voted", "the Asians and the blacks voted")
    theirs, ours = both("the mosques and the imams", MUSLIM_TO_JEWISH, "religion")
    assert (theirs, ours) == ("the mosques and the imams", "the synagogues and the rabbis")
