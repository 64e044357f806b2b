"""The bias-axis registry and files: shipped axes, user files, and every bad input."""

from __future__ import annotations

import json

import pytest

from cdsbias.axes import AXES, BiasAxis, get_axes, get_axis, is_axis_file
from cdsbias.axes.gender import CONTEXT_PAIRS, word_pair_tuples
from cdsbias.benchmarks.crows_pairs_data import BIAS_TYPES as CROWS_TYPES
from cdsbias.benchmarks.seat_data import TEST_NAMES as SEAT_TESTS
from cdsbias.benchmarks.stereoset_data import DOMAINS as STEREOSET_DOMAINS
from cdsbias.errors import CdsbiasError


@pytest.mark.parametrize("name", sorted(AXES))
def test_every_registered_axis_builds_and_is_complete(name: str) -> None:
    axis = get_axis(name)
    assert axis.name == name
    assert axis.k == len(axis.groups) >= 2
    assert all(len(words) == axis.k for words in axis.tuples)
    assert axis.self_debias_prefix and axis.self_debias_prefix.endswith(": ")
    assert axis.crows_pairs_category in CROWS_TYPES
    # SEAT tests and a StereoSet domain where one exists (StereoSet has four domains).
    assert set(axis.seat_tests) <= set(SEAT_TESTS)
    assert axis.stereoset_domain in (None, *STEREOSET_DOMAINS)
    assert "en" in (axis.languages or ())
    assert axis.citations
    for group in range(axis.k):
        for word in axis.words(group):
            assert axis.group_of(word) == group
            assert axis.group_of(word.capitalize()) == group


def test_each_crows_pairs_category_is_one_axis() -> None:
    # A variant (race@bias-bench) shares its base axis's category: one axis per category.
    axes = [get_axis(name) for name in AXES]
    categories = [axis.crows_pairs_category for axis in axes if axis.variant_of is None]
    assert sorted(categories) == sorted(CROWS_TYPES)


def test_gender_axis_is_the_pairs_the_methods_were_fitted_on() -> None:
    axis = get_axis("gender")
    assert axis.groups == ("male", "female")
    assert axis.tuples == (*word_pair_tuples(), *CONTEXT_PAIRS)
    assert ("he", "she") in axis.tuples


def test_bias_bench_prefixes_and_seat_sets() -> None:
    # bias_bench/benchmark/crows/crows.py DEBIASING_PREFIXES; export/seat.py test lists.
    assert get_axis("race").self_debias_prefix == (
        "The following text discriminates against people because of their race/color: "
    )
    assert get_axis("religion").seat_tests == (
        "sent-religion1", "sent-religion1b", "sent-religion2", "sent-religion2b",
    )  # fmt: skip
    assert len(get_axis("race").seat_tests) == 7
    assert get_axis("race").crows_pairs_category == "race-color"


def test_counterparts_follow_the_first_tuple_listing_a_word() -> None:
    religion = get_axis("religion")
    assert religion.counterpart("Muslim", 0) == "jewish"  # the adjective tuple comes first
    assert religion.counterpart("jew", 2) == "muslim"
    assert religion.counterpart("mosques", 1) == "churches"
    race = get_axis("race")
    assert race.counterpart("asian", 0) == "black"  # listed in two tuples: the first wins
    assert race.counterpart("caucasian", 0) == "african"
    assert race.group_of("paint") is None


def test_unknown_axis_suggests_the_nearest() -> None:
    with pytest.raises(CdsbiasError, match="Did you mean 'religion'"):
        get_axis("relgion")


def test_bias_bench_json_file(tmp_path) -> None:
    path = tmp_path / "bias_attribute_words.json"
    race = [["black", "caucasian", "asian"], ["african", "caucasian", "asian"],
            ["black", "white", "asian"], ["africa", "america", "asia"]]  # fmt: skip
    path.write_text(json.dumps({"race": race, "religion": [["jewish", "christian", "muslim"]]}))
    axis = get_axis(f"{path}#race")
    assert axis.name == "race" and axis.groups == ("black", "caucasian", "asian")
    assert axis.counterpart("black", 2) == "asian" and axis.counterpart("white", 0) == "black"
    with pytest.raises(CdsbiasError, match=r"several axes.*#race"):
        get_axis(str(path))
    with pytest.raises(CdsbiasError, match="no axis 'age'"):
        get_axis(f"{path}#age")
    assert is_axis_file(f"{path}#race") and not is_axis_file("race")


def test_user_tsv_file_with_forms(tmp_path) -> None:
    path = tmp_path / "age.tsv"
    path.write_text(
        "# my axis\nyoung\told\tform\nyoung\told\tadjective\nteenagers\tpensioners\tplural\n"
    )
    axis = get_axis(str(path))
    assert axis.name == "age" and axis.groups == ("young", "old")
    assert axis.forms == ("adjective", "plural")
    assert axis.counterpart("Teenagers", 1) == "pensioners"
    assert axis.self_debias_prefix is None and axis.languages is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("young\told\n", "a header but no word tuples"),
        ("young\n", "must name the groups"),
        ("young\told\nkid\n", r"age.tsv:2: 1 tab-separated field"),
        (
            "a\tb\tc\nx\ty\tx\n",
            r"age.tsv:2: tuple 1: 'x' is listed for group 'c' and for group 'a'",
        ),
        (
            "a\tb\nx\ty\ny\tz\n",
            r"age.tsv:3: tuple 2: 'y' is listed for group 'a' and for group 'b'",
        ),
        ("a\tb\tform\nx\ty\tverb\n", "form 'verb' is not one of"),
        ("a\tb\nx y\tz\n", "is not one lower-case word"),
    ],
)
def test_bad_tsv_files_name_the_line(tmp_path, content: str, message: str) -> None:
    path = tmp_path / "age.tsv"
    path.write_text(content)
    with pytest.raises(CdsbiasError, match=message):
        get_axis(str(path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ("[]", "bias-bench's shape"),
        ('{"race": []}', "not a non-empty list"),
        ('{"race": [["a", "b", "c"], ["d", "e"]]}', "tuple 2 .* has 2 word"),
        ('{"race": ["a"]}', "not a list of words"),
        ('{"race": [["a", "b"], ["b", "c"]]}', "'b' is listed for group"),
    ],
)
def test_bad_json_files(tmp_path, content: str, message: str) -> None:
    path = tmp_path / "words.json"
    path.write_text(content)
    with pytest.raises(CdsbiasError, match=message):
        get_axis(str(path))


def test_missing_and_wrong_kind_of_file(tmp_path) -> None:
    with pytest.raises(CdsbiasError, match="not found"):
        get_axis(str(tmp_path / "none.tsv"))
    with pytest.raises(CdsbiasError, match="a TSV holds one axis"):
        get_axis(f"{tmp_path / 'x.tsv'}#race")
    with pytest.raises(CdsbiasError, match="at least two groups"):
        BiasAxis(name="x", groups=("a",), tuples=(("a",),))


def test_language_without_the_axis_is_an_error() -> None:
    with pytest.raises(CdsbiasError, match="'de' has no 'race' axis"):
        get_axis("race").check_language("de", ("gender",))
    get_axis("race").check_language("en", ("gender", "race", "religion"))


def test_several_axes_once_each() -> None:
    assert [a.name for a in get_axes(["gender", "race"])] == ["gender", "race"]
    with pytest.raises(CdsbiasError, match="more than once"):
        get_axes(["race", "race"])
