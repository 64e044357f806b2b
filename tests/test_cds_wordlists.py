"""The shipped word lists are well-formed; malformed user lists fail with file:line."""

from __future__ import annotations

import pytest

from cdsbias.cds.wordlists import (
    load_ambiguous_names,
    load_name_pairs,
    load_word_pairs,
    load_wordlists,
    resource_path,
)
from cdsbias.errors import CdsbiasError


def test_shipped_word_pairs_are_clean_and_bidirectional():
    word_map, male_words, lowercase_only = load_word_pairs()
    assert word_map["he"] == "she" and word_map["she"] == "he"
    assert word_map["himself"] == "herself" and word_map["herself"] == "himself"
    # WinoBias typos and one-way entries are fixed.
    for typo in ("mentleman", "godess", "adultor", "barnoesses", "heros"):
        assert typo not in word_map
    assert word_map["gentleman"] == "lady" and word_map["lady"] == "gentleman"
    assert word_map["chairwomen"] == "chairmen"
    assert word_map["heroes"] == "heroines"
    assert "god" in lowercase_only
    assert "actor" in male_words
    # Every "both" pair maps back.
    two_way = [word for word in word_map if word_map.get(word_map[word]) == word]
    assert len(two_way) >= 300
    for pronoun in ("his", "her", "him", "hers"):
        assert pronoun not in word_map


def test_shipped_name_pairs_are_a_large_bijection():
    name_map = load_name_pairs()
    assert len(name_map) >= 2000  # >= 1,000 pairs, both directions
    assert all(name_map[name_map[name]] == name for name in name_map)
    assert "Lee" not in name_map  # ambiguous: common for both sexes
    ambiguous = load_ambiguous_names()
    assert ambiguous["May"] == "proper" and ambiguous["Bill"] == "word"


def test_resources_ship_inside_the_package():
    assert resource_path("README.md").is_file()
    assert "cdsbias" in resource_path("name_pairs.tsv").parts


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("actor\tactress\nbad line without tab\n", ":2: expected 'male<TAB>female"),
        ("actor\tactress\tsideways\n", ":1: direction 'sideways'"),
        ("# comment\n\nhis\ther\n", ":3: his/her/him/hers"),
        ("king\tqueen\nking\tempress\n", ":2: 'king' already maps to 'queen'"),
        ("king\tking\n", ":1: 'king' is paired with itself"),
        ("two words\tqueen\n", ":1: 'two words' is not a single word"),
        ("", "no word pairs found"),
    ],
)
def test_malformed_word_list_reports_file_and_line(tmp_path, content, message):
    path = tmp_path / "pairs.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"pairs\.tsv") as error:
        load_word_pairs(path)
    assert message in str(error.value)


def test_non_utf8_word_list(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"actor\tactress\nk\xe9ng\tqueen\n")
    with pytest.raises(CdsbiasError, match=r"pairs\.tsv:2: not valid UTF-8"):
        load_word_pairs(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("John\tMary\nPeter\n", ":2: expected 'MaleName<TAB>FemaleName'"),
        ("John\tMary\nJohn\tAnn\n", ":2: name 'John'"),
    ],
)
def test_malformed_name_list(tmp_path, content, message):
    path = tmp_path / "names.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CdsbiasError) as error:
        load_name_pairs(path)
    assert message in str(error.value)


def test_missing_word_list(tmp_path):
    with pytest.raises(CdsbiasError, match="not found"):
        load_wordlists(tmp_path / "absent.tsv")
