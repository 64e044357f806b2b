"""Crash-safe output (cdsbias.io): all or nothing, with ordinary permissions."""

from __future__ import annotations

import os
import stat

import pytest

from cdsbias.io import atomic_output_dir, atomic_path, atomic_write_text


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_and_folders_get_the_permissions_of_a_plain_write(tmp_path, umask_022):
    atomic_write_text(tmp_path / "a.txt", "x")
    with atomic_output_dir(tmp_path / "out") as staging:
        (staging / "f.txt").write_text("y")
    # mkstemp/mkdtemp would leave 0600/0700: unreadable to the rest of a shared cluster.
    assert mode(tmp_path / "a.txt") == 0o644
    assert mode(tmp_path / "out") == 0o755


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_failed_folder_keeps_the_old_folder(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "kept.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic_output_dir(tmp_path / "out") as staging:
        (staging / "new.txt").write_text("new")
        raise RuntimeError("crash")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["kept.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
