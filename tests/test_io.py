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


def test_read_csv_drops_a_bom_and_names_a_row_cut_short(tmp_path):
    from cdsbias.errors import CdsbiasError
    from cdsbias.io import read_csv

    path = tmp_path / "t.csv"
    path.write_bytes('\ufeffa,b\n1,"x, y"\n\n2,z\n'.encode())
    assert read_csv(path) == (["a", "b"], [(2, {"a": "1", "b": "x, y"}), (4, {"a": "2", "b": "z"})])
    path.write_text("a,b\n1,x\n2\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"t\.csv:3: 1 field\(s\), the header has 2 \(a,b\)"):
        read_csv(path)
    path.write_bytes("a,b\n1,café\n".encode("latin-1"))
    with pytest.raises(CdsbiasError, match=r"t\.csv is not UTF-8 text \(invalid .* at byte 9\)"):
        read_csv(path)


def test_check_output_refuses_earlier_results_and_names_a_file_in_the_way(tmp_path):
    from cdsbias.errors import CdsbiasError
    from cdsbias.io import check_output

    check_output(tmp_path / "new" / "deeper")  # nothing there: fine
    (tmp_path / "empty").mkdir()
    check_output(tmp_path / "empty", folder=True)  # an empty folder holds no results
    (tmp_path / "f.txt").write_text("mine")
    with pytest.raises(CdsbiasError, match="already exists and holds earlier results"):
        check_output(tmp_path / "f.txt")
    check_output(tmp_path / "f.txt", overwrite=True)
    with pytest.raises(CdsbiasError, match="is a file, not a folder"):
        check_output(tmp_path / "f.txt", folder=True, overwrite=True)
    with pytest.raises(CdsbiasError, match=r"f\.txt is a file, so .* cannot be written inside"):
        check_output(tmp_path / "f.txt" / "out.jsonl")
    with pytest.raises(CdsbiasError, match="is a folder; give a file name"):
        check_output(tmp_path / "empty", folder=False)
