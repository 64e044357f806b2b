"""Dataset registry and fetching: --from copies, checksums, downloads from a local server."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from cdsbias.cli import main
from cdsbias.data import fetch
from cdsbias.errors import CdsbiasError

SHARED_DATA = Path(
    os.environ.get("CDSBIAS_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
needs_shared = pytest.mark.skipif(
    not (SHARED_DATA / "gap-coreference").is_dir(), reason=f"no shared data at {SHARED_DATA}"
)


def test_registry_covers_every_dataset_with_full_checksums():
    assert set(fetch.DATASETS) == {
        "gap",
        "becpro",
        "winobias",
        "crows_pairs",
        "stereoset",
        "genda_lens",
        "seat",
        "seat_religion",
        "holistic_bias",
    }
    for spec in fetch.DATASETS.values():
        assert len(spec.commit) == 40 and spec.files
        for data_file in spec.files:
            assert len(data_file.sha256) == 64
            assert spec.url(data_file).startswith(
                f"https://raw.githubusercontent.com/{spec.repository}/{spec.commit}/"
            )
    gap = fetch.DATASETS["gap"]
    assert gap.file_names() == ["gap-development.tsv", "gap-test.tsv", "gap-validation.tsv"]
    becpro = fetch.DATASETS["becpro"]
    assert becpro.url(becpro.file("Professions US+DE.tsv")).endswith("Professions%20US%2BDE.tsv")


def test_each_dataset_spec_lives_with_the_code_that_reads_it():
    from cdsbias.benchmarks import (
        becpro_data,
        crows_pairs_data,
        genda_lens_data,
        holistic_bias_data,
        seat_data,
        stereoset_data,
        winobias,
    )
    from cdsbias.data import gap as gap_data

    owners = {
        "gap": gap_data, "becpro": becpro_data, "winobias": winobias,
        "crows_pairs": crows_pairs_data, "stereoset": stereoset_data,
        "genda_lens": genda_lens_data, "seat": seat_data,
        "seat_religion": seat_data, "holistic_bias": holistic_bias_data,
    }  # fmt: skip
    for name, module in owners.items():
        spec = module.RELIGION_DATASET if name == "seat_religion" else module.DATASET
        assert fetch.DATASETS[name] is spec, name
    assert "DatasetSpec(\n" not in Path(fetch.__file__).read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="'gap' is registered twice"):
        fetch.register_dataset(fetch.DatasetSpec("gap", "elsewhere", "MIT", "a/b", "0" * 40, ()))


#: Datasets the project's shared/data does not hold: bias-bench's religion SEAT tests
#: (checked against bias-bench's own repository below when a mirror of it is here).
NOT_SHARED = ("seat_religion",)
BIAS_BENCH_MIRROR = Path(
    os.environ.get("CDSBIAS_BIAS_BENCH_GIT", "/work/.mirror/McGill-NLP+bias-bench/repo")
)


@needs_shared
def test_registry_checksums_match_the_shared_files():
    for spec in fetch.DATASETS.values():
        if spec.name in NOT_SHARED:
            continue
        for data_file in spec.files:
            path = SHARED_DATA / spec.folder / data_file.path
            assert fetch.sha256_of(path) == data_file.sha256, path


@pytest.mark.skipif(not BIAS_BENCH_MIRROR.is_dir(), reason="no bias-bench git mirror")
def test_religion_seat_checksums_match_bias_bench_at_the_pinned_commit():
    import subprocess

    spec = fetch.DATASETS["seat_religion"]
    assert [f.path for f in spec.files] == [
        "sent-religion1.jsonl", "sent-religion1b.jsonl", "sent-religion2.jsonl",
        "sent-religion2b.jsonl",
    ]  # fmt: skip
    for data_file in spec.files:
        where = f"{spec.commit}:{data_file.upstream_path}"
        command = ["git", "-C", str(BIAS_BENCH_MIRROR), "show", where]
        blob = subprocess.run(command, capture_output=True, check=True).stdout
        assert hashlib.sha256(blob).hexdigest() == data_file.sha256, data_file.path


def test_a_religion_seat_test_not_fetched_names_its_fetch_command(tmp_path):
    from cdsbias.benchmarks import build_benchmark

    seat = build_benchmark("seat", axis="religion", data_dir=tmp_path)
    with pytest.raises(CdsbiasError, match=r"cdsbias data fetch seat_religion"):
        _ = seat.rows


@needs_shared
def test_fetch_from_shared_data_then_resolve(tmp_path):
    folder = fetch.fetch("gap", to_dir=tmp_path, from_dir=SHARED_DATA)
    assert folder == tmp_path / "gap-coreference"
    assert sorted(p.name for p in folder.iterdir()) == fetch.DATASETS["gap"].file_names()
    assert fetch.resolve("gap", "gap-test.tsv", data_dir=tmp_path) == folder / "gap-test.tsv"
    assert fetch.is_cached("gap", tmp_path)
    # --from may also point straight at the dataset folder; a second fetch is a no-op.
    assert fetch.fetch("gap", to_dir=tmp_path, from_dir=SHARED_DATA / "gap-coreference") == folder


@needs_shared
def test_checksum_mismatch_keeps_no_file(tmp_path):
    source = tmp_path / "source" / "winobias"
    shutil.copytree(SHARED_DATA / "winobias", source)
    (source / "male_occupations.txt").chmod(0o644)
    (source / "male_occupations.txt").write_text("tampered\n", encoding="utf-8")
    target = tmp_path / "cache"
    with pytest.raises(CdsbiasError, match=r"Checksum mismatch for .*male_occupations\.txt") as e:
        fetch.fetch("winobias", to_dir=target, from_dir=tmp_path / "source")
    message = str(e.value)
    assert fetch.DATASETS["winobias"].file("male_occupations.txt").sha256 in message
    assert hashlib.sha256(b"tampered\n").hexdigest() in message
    assert "\n" not in message
    leftovers = list((target / "winobias").iterdir())
    assert not any(
        path.name.startswith((".male_occupations", "male_occupations")) for path in leftovers
    )


def test_missing_source_folder_and_file(tmp_path):
    with pytest.raises(CdsbiasError, match="No 'gap-coreference' folder"):
        fetch.fetch("gap", to_dir=tmp_path / "cache", from_dir=tmp_path)
    partial = tmp_path / "gap-coreference"
    partial.mkdir()
    (partial / "gap-test.tsv").write_text("x", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"Missing file .*gap-development\.tsv"):
        fetch.fetch("gap", to_dir=tmp_path / "cache", from_dir=tmp_path)


def test_unknown_name_and_resolve_without_cache(tmp_path):
    with pytest.raises(CdsbiasError, match=r"Unknown dataset 'gapp'\. Did you mean 'gap'"):
        fetch.fetch("gapp", to_dir=tmp_path)
    with pytest.raises(CdsbiasError, match="run `cdsbias data fetch gap`"):
        fetch.resolve("gap", "gap-test.tsv", data_dir=tmp_path)
    with pytest.raises(CdsbiasError, match="Unknown file of dataset gap"):
        fetch.resolve("gap", "gap-train.tsv", data_dir=tmp_path)


@pytest.fixture
def local_server(tmp_path):
    """Serves tmp_path/www on 127.0.0.1 (never the internet)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


def _tiny_spec(base_url: str, sha256: str) -> fetch.DatasetSpec:
    class LocalSpec(fetch.DatasetSpec):
        def url(self, data_file):
            return f"{base_url}/{data_file.upstream_path}"

    return LocalSpec(
        name="tiny",
        folder="tiny-data",
        licence="CC0",
        repository="example/tiny",
        commit="0" * 40,
        files=(fetch.DataFile("rows.tsv", "upstream/rows.tsv", sha256),),
    )


def test_download_verifies_and_caches(tmp_path, local_server, monkeypatch):
    root, base_url = local_server
    (root / "upstream").mkdir()
    payload = b"id\ttext\n1\thello\n"
    (root / "upstream" / "rows.tsv").write_bytes(payload)
    spec = _tiny_spec(base_url, hashlib.sha256(payload).hexdigest())
    monkeypatch.setitem(fetch.DATASETS, "tiny", spec)
    monkeypatch.setenv("CDSBIAS_DATA_DIR", str(tmp_path / "cache"))
    folder = fetch.fetch("tiny")
    assert (folder / "rows.tsv").read_bytes() == payload
    assert folder == tmp_path / "cache" / "tiny-data"
    assert fetch.resolve("tiny", "rows.tsv") == folder / "rows.tsv"


def test_download_checksum_mismatch(tmp_path, local_server, monkeypatch):
    root, base_url = local_server
    (root / "upstream").mkdir()
    (root / "upstream" / "rows.tsv").write_bytes(b"changed upstream\n")
    monkeypatch.setitem(fetch.DATASETS, "tiny", _tiny_spec(base_url, "a" * 64))
    with pytest.raises(CdsbiasError, match=r"Checksum mismatch for http://127\.0\.0\.1"):
        fetch.fetch("tiny", to_dir=tmp_path / "cache")
    assert list((tmp_path / "cache" / "tiny-data").iterdir()) == []


def test_download_failure_suggests_from(tmp_path, local_server, monkeypatch):
    _, base_url = local_server  # nothing is served: 404
    monkeypatch.setitem(fetch.DATASETS, "tiny", _tiny_spec(base_url, "a" * 64))
    with pytest.raises(CdsbiasError, match=r"Could not download .*--data-dir DIR") as error:
        fetch.fetch("tiny", to_dir=tmp_path / "cache")
    assert "\n" not in str(error.value)


@needs_shared
def test_cli_fetch_and_list(tmp_path, capsys):
    assert (
        main(
            [
                "data",
                "fetch",
                "gap",
                "crows_pairs",
                "--from",
                str(SHARED_DATA),
                "--to",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert "gap: 3 files verified" in capsys.readouterr().out
    assert main(["data", "list", "--dir", str(tmp_path)]) == 0
    listing = capsys.readouterr().out
    assert "gap          cached" in listing and "stereoset    not cached" in listing


def test_cli_fetch_unknown_name_fails_before_any_work(tmp_path, capsys):
    assert main(["data", "fetch", "gap", "nope", "--to", str(tmp_path)]) == 2
    assert "Unknown dataset 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "gap-coreference").exists()


def test_fetch_takes_the_common_flag_names(tmp_path, capsys):
    """--data-dir and --out, as every other command names them (--from/--to are aliases)."""
    from cdsbias.cli import main

    if not SHARED_DATA.exists():
        pytest.skip("shared data folder is absent")
    args = ["data", "fetch", "gap", "--data-dir", str(SHARED_DATA), "--out", str(tmp_path)]
    assert main(args) == 0
    assert "gap: 3 files verified" in capsys.readouterr().out
    assert main(["data", "list", "--data-dir", str(tmp_path)]) == 0
