"""Axis and word-list files saved with a byte-order mark (as spreadsheet programs save
UTF-8) read as the same files without one: the mark is not part of the first group or word."""

from __future__ import annotations

import codecs

from cdsbias.axes import get_axis
from cdsbias.axes.files import read_axis_file
from cdsbias.axes.word_files import data_lines, load_word_pairs

AGE = "young\told\tform\nyoung\told\tadjective\nyouths\telders\tplural\n"


def test_an_axis_tsv_with_a_byte_order_mark_names_its_groups_without_it(tmp_path):
    plain, marked = tmp_path / "age.tsv", tmp_path / "age-bom.tsv"
    plain.write_text(AGE, encoding="utf-8")
    marked.write_bytes(codecs.BOM_UTF8 + AGE.encode("utf-8"))
    axis = read_axis_file(str(marked))
    assert axis.groups == ("young", "old")
    assert axis.tuples == read_axis_file(str(plain)).tuples
    assert axis.group_of("young") == 0


def test_a_json_axis_with_a_byte_order_mark_is_valid_json(tmp_path):
    marked = tmp_path / "words.json"
    marked.write_bytes(codecs.BOM_UTF8 + b'{"age": [["young", "old"], ["youths", "elders"]]}')
    assert read_axis_file(str(marked)).groups == ("young", "old")


def test_a_word_list_with_a_byte_order_mark_reads_its_first_word(tmp_path):
    marked = tmp_path / "pairs.tsv"
    marked.write_bytes(codecs.BOM_UTF8 + b"actor\tactress\nking\tqueen\n")
    assert data_lines(marked)[0] == (1, "actor\tactress")
    word_map, male, _ = load_word_pairs(marked)
    assert word_map["actor"] == "actress" and "actor" in male


def test_registered_axes_are_unchanged_by_the_byte_order_mark_handling():
    # The shipped files carry no mark; their first group is still the first column.
    assert get_axis("religion").groups == ("jewish", "christian", "muslim")
    assert get_axis("race").groups == ("black", "white", "asian")
