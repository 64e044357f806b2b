"""Every recipe under recipes/: opens with its launch command and loads as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdsbias.train.config import load_recipe
from cdsbias.train.streaming import build_streaming_data, load_stream
from cdsbias.train.wordpiece import train_wordpiece

REPO = Path(__file__).resolve().parents[1]
RECIPES = sorted((REPO / "recipes").glob("*.yaml"))


@pytest.mark.parametrize("path", RECIPES, ids=[p.stem for p in RECIPES])
def test_recipe_opens_with_its_launch_command_and_loads(path, tmp_path):
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    assert header, f"{path.name} has no header comment"
    assert any(f"train.py recipes/{path.name}" in line for line in header)
    assert any("Override" in line or "override" in line for line in header)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"text": "She is a nurse."}\n', encoding="utf-8")
    # A CPU machine: bf16 recipes load with use_cpu (GPU runs leave it out).
    overrides = ["use_cpu=true", f"output_dir={tmp_path / 'run'}"]
    if "data_files:" in path.read_text(encoding="utf-8"):
        overrides.append(f"data_files={corpus}")
    recipe = load_recipe(path, overrides)
    assert recipe.training.output_dir == str(tmp_path / "run")


def test_wikipedia_recipe_streams_a_local_dataset_folder(tmp_path):
    """The hub path of recipes/wikipedia_cda.yaml, offline: a folder load_dataset reads."""
    folder = tmp_path / "wiki"
    folder.mkdir()
    rows = [
        {"id": str(10 + i), "url": f"u{i}", "title": f"T{i}",
         "text": f"Article {i}. She was a nurse and her husband was a pilot in year {i}."}
        for i in range(12)
    ]  # fmt: skip
    (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe = load_recipe(
        REPO / "recipes" / "wikipedia_cda.yaml",
        ["use_cpu=true", f"dataset={folder}", "dataset_config_name=null", "heldout_documents=2",
         "max_seq_length=16", "output_dir=x"],
    )  # fmt: skip
    stream = load_stream(recipe.data)
    tokenizer = train_wordpiece([r["text"] for r in rows], 300)
    built = build_streaming_data(recipe.data, recipe.cds, tokenizer, seed=0, stream=stream)
    blocks = list(built.train)
    assert blocks and all(len(b["input_ids"]) == 16 for b in blocks)  # text_unit: chunk
    assert len(built.heldout) > 0
    # CDA doubles the text: more blocks than the original ten training articles give.
    originals = tokenizer([r["text"] for r in rows[2:]])["input_ids"]
    assert len(blocks) > sum(map(len, originals)) // 16
