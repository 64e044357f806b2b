"""Streaming corpora (``streaming: true``): lazy CDS and tokenization, held-out documents,
packed chunks, bad input, a run per file kind, resume after SIGKILL, two processes."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import datasets
import pytest
from tests_helpers import assert_same_points, kill_after_checkpoint

from cdsbias.cli import main as cli_main
from cdsbias.errors import CdsbiasError
from cdsbias.runs.folder import RUN_INFO_FILE
from cdsbias.runs.points import read_points
from cdsbias.train.config import CDSConfig, DataConfig, load_recipe
from cdsbias.train.data import build_training_data, load_documents
from cdsbias.train.run import main as train_main
from cdsbias.train.streaming import build_streaming_data, load_stream
from cdsbias.train.units import group_texts, split_sentences
from cdsbias.train.wordpiece import train_wordpiece

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "recipes" / "smoke.yaml"
RECORDER = REPO / "tests" / "assets" / "streaming" / "record_examples.py"

PEOPLE = ["nurse", "engineer", "teacher", "doctor", "pilot", "baker", "farmer", "lawyer"]


def corpus_rows(n: int) -> list[dict[str, str]]:
    """Distinct documents of two sentences with gendered words to substitute."""
    rows = []
    for i in range(n):
        job = PEOPLE[i % len(PEOPLE)]
        he_she = "She" if i % 2 else "He"
        rows.append({
            "body": f"{he_she} worked as a {job} in town number {i}. "
                    f"Her brother and his wife visited house {i} often.",
            "doc": f"d{i}",
        })  # fmt: skip
    return rows


def write_corpus(folder: Path, kind: str, rows: list[dict[str, str]], shards: int = 1) -> str:
    """``rows`` as ``shards`` files of ``kind``; returns the glob of the files."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = [rows[i::shards] for i in range(shards)] if shards > 1 else [rows]
    suffix = {"json": "jsonl", "text": "txt"}.get(kind, kind)
    for index, part in enumerate(parts):
        path = folder / f"part-{index}.{suffix}"
        if kind == "json":
            path.write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
        elif kind == "text":
            path.write_text("".join(r["body"] + "\n" for r in part), encoding="utf-8")
        elif kind == "csv":
            with open(path, "w", newline="", encoding="utf-8") as handle:
                writer = csv.DictWriter(handle, fieldnames=["doc", "body"])
                writer.writeheader()
                writer.writerows(part)
        else:
            datasets.Dataset.from_list(part).to_parquet(str(path))
    return str(folder / f"part-*.{suffix}")


def text_column(kind: str) -> str:
    return "text" if kind == "text" else "body"


@pytest.fixture(scope="module")
def tokenizer():
    texts = [r["body"] for r in corpus_rows(64)]
    return train_wordpiece(texts, 400)


def streaming_config(files: str, kind: str = "json", **values) -> DataConfig:
    values.setdefault("heldout_documents", 0)
    return DataConfig(
        dataset=kind, data_files=[files], text_column=text_column(kind), streaming=True,
        max_seq_length=32, **values,
    )  # fmt: skip


# ------------------------------------------------------------------ the pipeline
@pytest.mark.parametrize("kind", ["json", "csv", "parquet", "text"])
def test_stream_has_the_documents_of_the_in_memory_corpus(tmp_path, kind):
    files = write_corpus(tmp_path, kind, corpus_rows(12), shards=2)
    data = streaming_config(files, kind)
    streamed = list(load_stream(data))
    in_memory = load_documents(
        DataConfig(dataset=kind, data_files=[files], text_column=text_column(kind))
    )
    assert [row[text_column(kind)] for row in streamed] == in_memory["text"]
    assert isinstance(load_stream(data), datasets.IterableDataset)


def test_streamed_substitution_equals_the_cds_command(tmp_path, tokenizer):
    files = write_corpus(tmp_path / "c", "json", corpus_rows(30))
    out = tmp_path / "cds.jsonl"
    argv = ["cds", files, "--text-column", "body", "--probability", "0.5", "--out", str(out)]
    assert cli_main(argv) == 0
    substituted = [json.loads(line)["body"] for line in out.read_text().splitlines()]
    assert 0 < sum(a != b["body"] for a, b in zip(substituted, corpus_rows(30))) < 30
    data = streaming_config(files)
    cds = CDSConfig(cds_mode="cds", cds_probability=0.5)
    built = build_streaming_data(data, cds, tokenizer, seed=0, stream=load_stream(data))
    sentences = [s for text in substituted for s in split_sentences(text)]
    expected = tokenizer(sentences, truncation=True, max_length=32)["input_ids"]
    assert [row["input_ids"] for row in built.train] == expected


def test_streamed_sentences_are_the_in_memory_examples(tmp_path, tokenizer):
    files = write_corpus(tmp_path, "json", corpus_rows(20), shards=2)
    cds = CDSConfig(cds_mode="cds", cds_probability=1.0)
    streamed = build_streaming_data(
        streaming_config(files), cds, tokenizer, seed=0, stream=load_stream(streaming_config(files))
    )
    in_memory_config = DataConfig(
        dataset="json", data_files=[files], text_column="body", heldout_fraction=0.0,
        max_seq_length=32,
    )  # fmt: skip
    in_memory = build_training_data(in_memory_config, cds, tokenizer, seed=0)
    rows = list(streamed.train)
    assert [row["input_ids"] for row in rows] == in_memory.train["input_ids"]
    assert len(rows) == 40  # two sentences per document
    ids = [row["example_id"] for row in rows]
    assert len(set(ids)) == len(ids)  # each example its own masks
    assert (streamed.n_documents, streamed.n_counterfactual, streamed.heldout) == (None, None, None)


def test_heldout_documents_are_the_first_and_never_trained_on(tmp_path, tokenizer):
    rows = corpus_rows(10)
    files = write_corpus(tmp_path, "json", rows)
    data = streaming_config(files, heldout_documents=3)
    built = build_streaming_data(
        data, CDSConfig(cds_mode="none"), tokenizer, seed=0, stream=load_stream(data)
    )
    sentences = [s for r in rows for s in split_sentences(r["body"])]
    encoded = tokenizer(sentences, truncation=True, max_length=32)["input_ids"]
    assert len(built.heldout) == 6
    restored = [
        [lab if lab != -100 else tok for tok, lab in zip(row["input_ids"], row["labels"])]
        for row in built.heldout
    ]
    assert restored == encoded[:6]
    assert [row["input_ids"] for row in built.train] == encoded[6:]


def test_shuffle_buffer_reorders_the_stream_the_same_way_for_a_seed(tmp_path, tokenizer):
    files = write_corpus(tmp_path, "json", corpus_rows(40), shards=2)
    cds = CDSConfig(cds_mode="none")

    def examples(seed: int, buffer: int) -> list[list[int]]:
        data = streaming_config(files, shuffle_buffer_size=buffer)
        built = build_streaming_data(data, cds, tokenizer, seed=seed, stream=load_stream(data))
        return [row["input_ids"] for row in built.train]

    in_order = examples(0, 0)
    shuffled = examples(0, 16)
    assert shuffled != in_order and sorted(shuffled) == sorted(in_order)
    assert examples(0, 16) == shuffled  # a resumed run replays the same order
    assert examples(1, 16) != shuffled


def test_chunks_are_full_blocks_of_the_concatenated_documents(tmp_path, tokenizer):
    rows = corpus_rows(16)
    files = write_corpus(tmp_path, "json", rows)
    data = streaming_config(files, text_unit="chunk")
    built = build_streaming_data(
        data, CDSConfig(cds_mode="none"), tokenizer, seed=0, stream=load_stream(data)
    )
    blocks = [row["input_ids"] for row in built.train]
    whole = dict(tokenizer([r["body"] for r in rows], return_special_tokens_mask=True))
    expected = group_texts(whole, 32)["input_ids"]
    assert blocks == expected
    assert blocks and all(len(block) == 32 for block in blocks)
    in_memory = build_training_data(
        DataConfig(dataset="json", data_files=[files], text_column="body", text_unit="chunk",
                   heldout_fraction=0.0, max_seq_length=32),
        CDSConfig(cds_mode="none"), tokenizer, seed=0,
    )  # fmt: skip
    assert in_memory.train["input_ids"] == expected


def test_chunk_longer_than_the_corpus_is_a_clear_error(tmp_path, tokenizer):
    files = write_corpus(tmp_path, "json", corpus_rows(2))
    data = DataConfig(dataset="json", data_files=[files], text_column="body",
                      text_unit="chunk", heldout_fraction=0.0, max_seq_length=512)  # fmt: skip
    with pytest.raises(CdsbiasError, match="shorter than one block of max_seq_length=512"):
        build_training_data(data, CDSConfig(cds_mode="none"), tokenizer, seed=0)


# ------------------------------------------------------------------ bad input
def bad_stream_cases(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    good = write_corpus(tmp_path / "good", "json", corpus_rows(5))
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("She is a nurse.\nHe is a caf\xe9 owner.\n".encode("latin-1"))
    stream = ["streaming=true", "heldout_documents=1"]
    return {
        "missing column": (
            [*stream, "dataset=json", f"data_files={good}", "text_column=content"],
            "column 'content' not found; the corpus has: body, doc",
        ),
        "empty corpus": ([*stream, "dataset=json", f"data_files={empty}"], "has no documents"),
        "empty glob": (
            [*stream, "dataset=json", f"data_files={tmp_path}/nothing/*.jsonl"],
            "no file matches",
        ),
        "not utf-8": (
            [*stream, "dataset=text", f"data_files={latin}"],
            f"{latin} is not UTF-8: invalid byte at offset 27",
        ),
        "no max_steps": (
            [*stream, "dataset=json", f"data_files={good}", "text_column=body", "max_steps=-1"],
            "streaming: true needs max_steps",
        ),
        "heldout takes all": (
            [
                *stream[:1],
                "heldout_documents=5",
                "dataset=json",
                f"data_files={good}",
                "text_column=body",
            ],
            "none left to train on after heldout_documents=5",
        ),
        "heldout_fraction with streaming": (
            ["streaming=true", "dataset=json", f"data_files={good}", "text_column=body"],
            "with streaming: true set heldout_documents",
        ),
        "heldout_documents in memory": (
            ["heldout_documents=3", "dataset=json", f"data_files={good}", "text_column=body"],
            "heldout_documents applies to streaming: true",
        ),
        "shuffle in memory": (
            ["shuffle_buffer_size=100", "dataset=json", f"data_files={good}", "text_column=body"],
            "shuffle_buffer_size applies to streaming: true",
        ),
    }


@pytest.mark.parametrize(
    "case",
    ["missing column", "empty corpus", "empty glob", "not utf-8", "no max_steps",
     "heldout takes all", "heldout_fraction with streaming", "heldout_documents in memory",
     "shuffle in memory"],
)  # fmt: skip
def test_bad_stream_is_one_error_line_and_keeps_an_earlier_run(tmp_path, capsys, case):
    overrides, message = bad_stream_cases(tmp_path)[case]
    out = tmp_path / "run"
    out.mkdir()
    (out / "bias_metrics.jsonl").write_text('{"step": 0}\n')
    argv = [str(SMOKE), f"output_dir={out}", "overwrite_output_dir=true", "report_to=none",
            *overrides]  # fmt: skip
    assert train_main(argv) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert message in errors[0]
    assert (out / "bias_metrics.jsonl").read_text() == '{"step": 0}\n'


def test_heldout_fraction_beside_heldout_documents_warns():
    with pytest.warns(UserWarning, match="heldout_fraction is ignored with streaming"):
        recipe = load_recipe(SMOKE, ["output_dir=x", "streaming=true", "heldout_documents=4"])
    assert recipe.data.heldout_documents == 4


# ------------------------------------------------------------------ training runs
def stream_args(out: Path, files: str, kind: str, *extra: str) -> list[str]:
    return [
        str(SMOKE), f"output_dir={out}", f"dataset={kind}", f"data_files={files}",
        f"text_column={text_column(kind)}", "max_documents=null", "report_to=none", *extra,
    ]  # fmt: skip


def run_and_check(tmp_path: Path, kind: str, streaming: bool) -> None:
    files = write_corpus(tmp_path / "corpus", kind, corpus_rows(60), shards=2)
    out = tmp_path / "run"
    extra = ["streaming=true", "heldout_documents=6"] if streaming else []
    assert train_main(stream_args(out, files, kind, "max_steps=2", "save_steps=2", *extra)) == 0
    points = read_points(out)
    assert [p["step"] for p in points] == [0, 2]
    assert points[-1]["heldout_loss"] > 0
    info = json.loads((out / RUN_INFO_FILE).read_text())
    suffix = ", streamed" if streaming else " (60 documents)"
    assert info["corpus"]["description"] == f"local {kind} files{suffix}"


def test_a_streamed_json_corpus_trains_through_the_smoke_recipe(tmp_path):
    run_and_check(tmp_path, "json", streaming=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "streaming"),
    [("csv", True), ("parquet", True), ("text", True),
     ("json", False), ("csv", False), ("parquet", False), ("text", False)],
)  # fmt: skip
def test_every_file_kind_trains_streaming_and_not(tmp_path, kind, streaming):
    run_and_check(tmp_path, kind, streaming)


@pytest.mark.slow
def test_streamed_run_resumed_after_sigkill_matches_uninterrupted_run(tmp_path):
    files = write_corpus(tmp_path / "corpus", "json", corpus_rows(80), shards=2)
    common = ["streaming=true", "heldout_documents=8", "text_unit=chunk", "max_steps=6",
              "save_steps=2", "dataloader_num_workers=2", "shuffle_buffer_size=16"]  # fmt: skip
    full = tmp_path / "full"
    assert train_main(stream_args(full, files, "json", *common)) == 0

    killed = tmp_path / "killed"
    kill_after_checkpoint(stream_args(killed, files, "json", *common), killed, step=2)
    assert not (killed / "checkpoint-6").exists()

    resumed = stream_args(killed, files, "json", *common, "resume_from_checkpoint=true")
    assert train_main(resumed) == 0
    assert_same_points(full, killed, [0, 2, 4, 6])


@pytest.mark.integration
def test_two_processes_train_on_disjoint_parts_whose_union_is_the_stream_prefix(tmp_path):
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    if accelerate is None:
        pytest.skip("accelerate launcher not installed")
    rows = corpus_rows(120)
    files = write_corpus(tmp_path / "corpus", "json", rows, shards=4)
    out = tmp_path / "two"
    steps, batch = 5, 4
    args = stream_args(
        out, files, "json", "streaming=true", "heldout_documents=0", "cds_mode=none",
        f"max_steps={steps}", "save_steps=5", f"per_device_train_batch_size={batch}",
        "use_cpu=true", "bias_eval_at_start=false",
    )  # fmt: skip
    launch = [accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
              "--mixed_precision", "no", "--dynamo_backend", "no"]  # fmt: skip
    done = subprocess.run(
        [*launch, str(RECORDER), *args], cwd=REPO, capture_output=True, text=True, timeout=900,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = {}
    for rank in (0, 1):
        lines = (out / f"seen-rank{rank}.jsonl").read_text().splitlines()
        seen[rank] = [tuple(row) for line in lines for row in json.loads(line)["rows"]]
        assert len(seen[rank]) == steps * batch
    assert not set(seen[0]) & set(seen[1])  # no example on both ranks
    # The union is the first 2 x steps x batch examples of the stream, each once.
    recipe = load_recipe(SMOKE, args[1:])
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    sentences = [s for doc in load_stream(recipe.data) for s in split_sentences(doc["body"])]
    encoded = tokenizer(sentences, truncation=True, max_length=recipe.data.max_seq_length)
    prefix = [tuple(ids) for ids in encoded["input_ids"][: 2 * steps * batch]]
    assert Counter(seen[0] + seen[1]) == Counter(prefix)
