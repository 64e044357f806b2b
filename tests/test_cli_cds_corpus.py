"""``cdsbias cds`` on corpora: input kinds, output formats, equality with training, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets")

from cdsbias.cds import CounterfactualMapper  # noqa: E402
from cdsbias.cds.corpus_io import first_invalid_utf8, write_corpus  # noqa: E402
from cdsbias.cli import main  # noqa: E402

DOCS = [
    "He gave her his book.",
    "Mary thanked her brother.",
    "The king and the queen met Zoë.",
    "She is a nurse and he is a doctor.",
    "My father called his son.",
    "The weather was fine.",
]
SWAPPED = [
    "She gave him her book.",
    "James thanked his sister.",
    "The queen and the king met Zoë.",
    "He is a nurse and she is a doctor.",
    "My mother called her daughter.",
    "The weather was fine.",
]


@pytest.fixture(autouse=True)
def _private_datasets_cache(tmp_path, monkeypatch):
    # load_dataset/map caches go to the test's folder, not the user's ~/.cache.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "hf-cache")


def cds(*args: str | Path) -> int:
    return main(["cds", *map(str, args), "--analyzer", "rules", "--quiet"])


def test_jsonl_with_a_custom_text_column(tmp_path):
    source = write_jsonl(
        tmp_path / "in.jsonl", [{"uid": i, "body": text} for i, text in enumerate(DOCS)]
    )
    out = tmp_path / "out.jsonl"
    assert cds(source, "--out", out, "--text-column", "body", "--probability", "1") == 0
    rows = read_jsonl(out)
    assert [row["body"] for row in rows] == SWAPPED
    assert [row["uid"] for row in rows] == list(range(len(DOCS)))
    assert all(row["counterfactual"] for row in rows)
    assert "Zoë" in out.read_text(encoding="utf-8")  # force_ascii=False
    report = json.loads((tmp_path / "out.jsonl.report.json").read_text(encoding="utf-8"))
    assert report["documents_total"] == 6 and report["documents_substituted"] == 6
    assert report["pairs"]["he->she"] == 2 and report["pairs"]["Mary->James"] == 1
    assert report["substitutions_total"] == sum(report["pairs"].values())
    assert report["documents"]["5"] == {"substituted": True, "substitutions": 0}
    assert report["settings"]["text_column"] == "body"


def test_txt_to_save_to_disk_folder(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(DOCS) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert cds(source, "--out", out, "--probability", "1") == 0
    reloaded = datasets.load_from_disk(str(out))
    assert reloaded["text"] == SWAPPED
    assert reloaded.column_names == ["text", "counterfactual"]
    assert (tmp_path / "out.report.json").is_file()


def test_csv_to_parquet_and_parquet_to_jsonl(tmp_path):
    source = tmp_path / "in.csv"
    datasets.Dataset.from_dict({"text": DOCS, "label": list(range(6))}).to_csv(
        str(source), index=False
    )
    parquet = tmp_path / "mid.parquet"
    assert cds(source, "--out", parquet, "--mode", "cda") == 0
    middle = datasets.load_dataset("parquet", data_files=str(parquet), split="train")
    assert middle["text"][0::2] == DOCS and middle["text"][1::2] == SWAPPED
    assert middle["label"] == [i for i in range(6) for _ in range(2)]
    # Parquet in: substituting the cda output once more swaps every text back or over.
    out = tmp_path / "out.jsonl"
    assert cds(parquet, "--out", out, "--probability", "1") == 0
    assert [row["text"] for row in read_jsonl(out)][1::2] == DOCS
    report = json.loads((tmp_path / "mid.parquet.report.json").read_text(encoding="utf-8"))
    assert report["documents_total"] == 6  # cda: one entry per input document


@pytest.mark.parametrize(
    ("mode", "probability", "names"), [("cds", 0.5, True), ("cds", 0.3, False), ("cda", 0.5, True)]
)
def test_output_equals_the_training_path(tmp_path, mode, probability, names):
    texts = [f"{text} (doc {i})" for i, text in enumerate(DOCS * 5)]
    ids = [f"doc-{i}" for i in range(len(texts))]
    source = write_jsonl(
        tmp_path / "in.jsonl", [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]
    )
    out = tmp_path / "out.jsonl"
    flags = ["--mode", mode, "--probability", str(probability), "--seed", "7"]
    assert cds(source, "--out", out, *flags, "--names" if names else "--no-names") == 0
    # As cdsbias/train/data.py applies CDS to its id/text documents.
    mapper = CounterfactualMapper(
        "text", mode=mode, probability=probability, seed=7, names=names, id_column="id"
    )
    documents = datasets.Dataset.from_dict({"id": ids, "text": texts})
    expected = documents.map(mapper, batched=True, desc="counterfactual substitution")
    rows = read_jsonl(out)
    assert [row["text"] for row in rows] == expected["text"]
    assert [row["counterfactual"] for row in rows] == expected["counterfactual"]
    if mode == "cds":
        assert 0 < sum(expected["counterfactual"]) < len(texts)


def test_same_seed_same_bytes_and_num_proc_does_not_matter(tmp_path):
    texts = [f"{text} ({i})" for i, text in enumerate(DOCS * 4)]
    source = write_jsonl(tmp_path / "in.jsonl", [{"text": t} for t in texts])
    outs = {}
    for name, extra in [
        ("a", ["--seed", "3"]),
        ("b", ["--seed", "3"]),
        ("parallel", ["--seed", "3", "--num-proc", "2"]),
        ("other", ["--seed", "4"]),
    ]:
        outs[name] = tmp_path / f"{name}.jsonl"
        assert cds(source, "--out", outs[name], *extra) == 0
    first = outs["a"].read_bytes()
    assert first == outs["b"].read_bytes() == outs["parallel"].read_bytes()
    assert first != outs["other"].read_bytes()
    reports = [json.loads((tmp_path / f"{n}.jsonl.report.json").read_text()) for n in "ab"]
    parallel = json.loads((tmp_path / "parallel.jsonl.report.json").read_text())
    assert reports[0] == reports[1]
    assert {k: v for k, v in parallel.items() if k != "settings"} == {
        k: v for k, v in reports[0].items() if k != "settings"
    }


def test_dataset_local_folder_and_globs(tmp_path):
    folder = tmp_path / "corpus"
    write_jsonl(folder / "train.jsonl", [{"text": t} for t in DOCS[:3]])
    write_jsonl(folder / "test.jsonl", [{"text": t} for t in DOCS[3:]])
    out = tmp_path / "out.jsonl"
    args = ["--dataset", folder, "--split", "test", "--out", out, "--probability", "1"]
    assert cds(*args) == 0
    assert [row["text"] for row in read_jsonl(out)] == SWAPPED[3:]
    report = json.loads((tmp_path / "out.jsonl.report.json").read_text(encoding="utf-8"))
    assert report["settings"]["dataset"] == str(folder) and report["settings"]["split"] == "test"
    # A glob over several files of one kind, read in sorted order (test before train).
    assert cds(str(folder / "*.jsonl"), "--out", out, "--probability", "1", "--overwrite") == 0
    assert [row["text"] for row in read_jsonl(out)] == SWAPPED[3:] + SWAPPED[:3]


def test_quiet_hides_progress_bars_and_default_shows_them(tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", [{"text": t} for t in DOCS])
    assert cds(source, "--out", tmp_path / "q.jsonl") == 0
    assert "counterfactual substitution" not in capsys.readouterr().err
    assert datasets.is_progress_bar_enabled()  # restored after the command
    assert main(["cds", str(source), "--out", str(tmp_path / "v.jsonl")]) == 0
    assert "counterfactual substitution (cds)" in capsys.readouterr().err


def _bad_inputs(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Case name -> (command arguments, expected text of the error line)."""
    good = write_jsonl(tmp / "good.jsonl", [{"body": t} for t in DOCS])
    (tmp / "empty.txt").write_text("", encoding="utf-8")
    (tmp / "header.csv").write_text("text,label\n", encoding="utf-8")
    (tmp / "latin1.txt").write_bytes("fine line\ncaf\xe9 au lait\n".encode("latin-1"))
    (tmp / "notes.xml").write_text("<x/>", encoding="utf-8")
    return {
        "missing column": ([str(good)], "column 'text' not found; the corpus has: body"),
        "empty txt": ([str(tmp / "empty.txt")], "has no documents"),
        "header-only csv": ([str(tmp / "header.csv")], "has no documents"),
        "missing file": ([str(tmp / "absent.jsonl")], "input file not found"),
        "empty glob": ([str(tmp / "nothing" / "*.jsonl")], "no file matches"),
        "not utf-8": (
            [str(tmp / "latin1.txt")],
            "latin1.txt is not UTF-8: invalid byte at offset 13 (line 2)",
        ),
        "unknown extension": ([str(tmp / "notes.xml")], "use .txt, .jsonl, .json, .csv, .parquet"),
        "out is input": ([str(good), "--text-column", "body", "--out", str(good)], "must differ"),
        "missing dataset folder": (["--dataset", str(tmp / "no-such-folder")], "could not load"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "missing column",
        "empty txt",
        "header-only csv",
        "missing file",
        "empty glob",
        "not utf-8",
        "unknown extension",
        "out is input",
        "missing dataset folder",
    ],
)
def test_bad_input_is_one_error_line_and_keeps_earlier_output(tmp_path, capsys, case):
    args, expected = _bad_inputs(tmp_path)[case]
    out = tmp_path / "earlier.jsonl"
    out.write_text('{"text": "earlier output"}\n', encoding="utf-8")
    report = tmp_path / "earlier.jsonl.report.json"
    report.write_text("{}\n", encoding="utf-8")
    before = listing(tmp_path)
    if "--out" not in args:
        args = [*args, "--out", str(out)]
    args = [*args, "--overwrite"]  # even told to replace them, a bad input keeps them
    capsys.readouterr()
    assert cds(*args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err
    assert expected in err
    assert out.read_text(encoding="utf-8") == '{"text": "earlier output"}\n'
    assert report.read_text(encoding="utf-8") == "{}\n"
    assert listing(tmp_path) == before  # no temporary files left


def test_utf8_offset_across_chunk_boundaries(tmp_path):
    path = tmp_path / "big.txt"
    # "é" (2 bytes) straddles the 1 MiB read boundary; the bad byte comes after it.
    head = b"a" * ((1 << 20) - 1) + "é\n".encode()
    path.write_bytes(head + b"ok\n\xff")
    assert first_invalid_utf8(path) == (len(head) + 3, 3)
    path.write_bytes(head)
    assert first_invalid_utf8(path) is None


def test_failed_write_keeps_the_earlier_output(tmp_path, monkeypatch):
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n", encoding="utf-8")
    corpus = datasets.Dataset.from_dict({"text": DOCS})

    def half_write(self, path, **kwargs):
        Path(path).write_text("partial", encoding="utf-8")
        raise OSError("disk full")

    monkeypatch.setattr(datasets.Dataset, "to_json", half_write)
    with pytest.raises(OSError, match="disk full"):
        write_corpus(corpus, out)
    assert out.read_text(encoding="utf-8") == "earlier\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_unsupported_output_suffix_is_refused_before_reading(tmp_path, capsys):
    source = write_jsonl(tmp_path / "in.jsonl", [{"text": t} for t in DOCS])
    assert cds(source, "--out", tmp_path / "out.csv") == 2
    assert "use an output ending in .jsonl or .parquet" in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()


def test_custom_word_pairs_reach_every_worker(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("glorpman\tglorpwoman\n", encoding="utf-8")
    source = write_jsonl(
        tmp_path / "in.jsonl", [{"text": f"The glorpman {i} left."} for i in range(4)]
    )
    out = tmp_path / "out.jsonl"
    args = ["--out", out, "--probability", "1", "--word-pairs", pairs, "--num-proc", "2"]
    assert cds(source, *args) == 0
    assert [row["text"] for row in read_jsonl(out)] == [
        f"The glorpwoman {i} left." for i in range(4)
    ]


def test_gap_tsv_refuses_corpus_flags(tmp_path, capsys):
    source = tmp_path / "gap.tsv"
    source.write_text("ID\tText\n", encoding="utf-8")
    assert cds(source, "--out", tmp_path / "out.tsv", "--text-column", "Text") == 2
    assert "--text-column applies to corpora" in capsys.readouterr().err
