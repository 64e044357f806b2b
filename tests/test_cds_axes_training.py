"""A run with ``bias_axis: religion`` (n-ary CDA) trains streamed, and one killed after a
checkpoint and resumed matches the uninterrupted run, as gender CDS does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests_helpers import assert_same_points, kill_after_checkpoint

from cdsbias.runs.points import read_points
from cdsbias.train.run import main as train_main

SMOKE = Path(__file__).resolve().parents[1] / "recipes" / "smoke.yaml"
PEOPLE = ["nurse", "engineer", "teacher", "doctor", "pilot", "baker", "farmer", "lawyer"]
RELIGION = [
    "A Muslim woman prayed in the mosque.",
    "The Jewish family read the Torah.",
    "Christians met the priest at the church.",
    "The weather was fine.",
]


def write_corpus(folder: Path, n: int) -> str:
    """Two JSON-lines shards of documents with gendered words and (mostly) religion words."""
    folder.mkdir(parents=True)
    for shard in range(2):
        lines = []
        for i in range(shard, n, 2):
            he_she = "She" if i % 2 else "He"
            body = (f"{he_she} worked as a {PEOPLE[i % 8]} in town number {i}. Her brother and "
                    f"his wife visited house {i} often. {RELIGION[i % 4]}")  # fmt: skip
            lines.append(json.dumps({"doc": f"d{i}", "body": body}))
        (folder / f"part-{shard}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(folder / "part-*.jsonl")


def args(out: Path, files: str, *extra: str) -> list[str]:
    return [
        str(SMOKE), f"output_dir={out}", "dataset=json", f"data_files={files}",
        "text_column=body", "max_documents=null", "report_to=none", "bias_axis=religion",
        "cds_mode=cda", "streaming=true", "heldout_documents=8", *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_religion_cda_run_resumed_after_sigkill_matches_uninterrupted_run(tmp_path):
    files = write_corpus(tmp_path / "corpus", 80)
    common = ["text_unit=chunk", "max_steps=6", "save_steps=2", "shuffle_buffer_size=16"]
    full = tmp_path / "full"
    assert train_main(args(full, files, *common)) == 0
    assert [p["step"] for p in read_points(full)] == [0, 2, 4, 6]

    killed = tmp_path / "killed"
    kill_after_checkpoint(args(killed, files, *common), killed, step=2)
    assert not (killed / "checkpoint-6").exists()
    assert train_main(args(killed, files, *common, "resume_from_checkpoint=true")) == 0
    assert_same_points(full, killed, [0, 2, 4, 6])
