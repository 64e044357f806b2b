"""Result folders of axis-scoped benchmarks: ``NAME@AXIS`` (no glob characters), keys
``NAME[AXIS]`` unchanged, folders named ``NAME[AXIS]`` still read (issue 36)."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest

from cdsbias.benchmarks import (
    BenchmarkResult,
    result_folder,
    result_folder_name,
    result_key,
    write_result,
)
from cdsbias.runs.folder import RunFolder


@pytest.mark.parametrize(
    ("key", "folder"),
    [
        ("crows_pairs[religion]", "crows_pairs@religion"),
        ("seat[race]", "seat@race"),
        ("becpro", "becpro"),
        ("stereoset[my-axis.v2]", "stereoset@my-axis.v2"),
    ],
)
def test_folder_names_round_trip(key, folder):
    assert result_folder_name(key) == folder
    assert result_key(folder) == key
    assert not set(folder) & set("[]*?{} ")  # nothing a shell expands or splits


def test_a_user_axis_name_loses_the_characters_a_shell_would_read():
    assert result_folder_name("crows_pairs[my colours [v1]]") == "crows_pairs@my_colours_v1_"


def test_a_bracket_folder_is_its_own_key():
    assert result_key("crows_pairs[religion]") == "crows_pairs[religion]"


def _result(key: str) -> BenchmarkResult:
    return BenchmarkResult(key, pd.DataFrame({"x": [1]}), {"key": key}, {"m": 1.0}, "report")


def test_write_result_writes_the_at_folder_which_a_shell_takes_as_it_is(tmp_path):
    folder = write_result(_result("crows_pairs[religion]"), tmp_path)
    assert folder == tmp_path / "crows_pairs@religion"
    assert (folder / "summary.json").is_file()
    (tmp_path / "crows_pairsr").mkdir()  # what the bracket name matches as a glob in bash
    words = subprocess.run(
        ["bash", "-c", "echo crows_pairs@religion crows_pairs[religion]"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert words == ["crows_pairs@religion", "crows_pairsr"]


def test_runs_with_bracket_folders_are_still_read(tmp_path):
    run = RunFolder(tmp_path)
    old = run.results_dir(5) / "crows_pairs[religion]"
    old.mkdir(parents=True)
    (old / "summary.json").write_text(json.dumps({"written": "bracket"}))
    assert result_folder(run.results_dir(5), "crows_pairs[religion]") == old
    assert run.summary_at(5, "crows_pairs[religion]") == {"written": "bracket"}
    # A new result for the same key goes to NAME@AXIS and is the one read from then on.
    write_result(_result("crows_pairs[religion]"), run.results_dir(5))
    assert run.summary_at(5, "crows_pairs[religion]") == {"key": "crows_pairs[religion]"}
    assert run.summary_at(5, "seat[religion]") is None
