"""The model card: base model naming, corpus, per-benchmark sections and hub results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard

from cdsbias.hub import hub_model_id
from cdsbias.runs.card import model_card


def _run(tmp_path: Path, base: str, *, hub_origin: str | None = None, gaps=(1.5, 0.25)) -> Path:
    """A run folder as train.py leaves it, without training (two evaluated points)."""
    run = tmp_path / "run"
    (run / "checkpoint-4").mkdir(parents=True)
    if hub_origin is not None:
        folder = Path(base)
        folder.mkdir(parents=True, exist_ok=True)
        config = {"model_type": "bert"}
        if hub_origin is not None:
            config["_name_or_path"] = hub_origin
        (folder / "config.json").write_text(json.dumps(config))
    recipe = {"model_name_or_path": base, "init_from_scratch": False, "dataset": "occupations",
              "cds_mode": "cds", "cds_probability": 0.5, "output_dir": str(run),
              "data_dir": str(tmp_path / "data"), "learning_rate": 5e-4}  # fmt: skip
    (run / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    headline = [{"key": "mean_abs_gap", "label": "mean |gap|", "unit": "nats",
                 "better": "lower", "ideal": 0.0}]  # fmt: skip
    points = [
        {"step": step, "heldout_loss": loss, "benchmarks": {"becpro": {
            "metrics": {"mean_abs_gap": gap, "gap_male": gap, "gap_female": -gap,
                        "gap_balanced": 0.0},
            "headline": headline, "language": "en", "options": {"n_resamples": 100}}}}
        for step, gap, loss in ((0, gaps[0], 2.0), (4, gaps[1], 2.1))
    ]  # fmt: skip
    (run / "bias_metrics.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    return run


def test_hub_model_id_of_hub_names_and_local_folders(tmp_path):
    assert hub_model_id("bert-base-uncased") == "bert-base-uncased"
    assert hub_model_id("FacebookAI/roberta-base") == "FacebookAI/roberta-base"
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "config.json").write_text(json.dumps({"_name_or_path": "google-bert/bert-base-cased"}))
    assert hub_model_id(saved) == "google-bert/bert-base-cased"
    (saved / "config.json").write_text(json.dumps({"_name_or_path": str(tmp_path / "elsewhere")}))
    assert hub_model_id(saved) is None
    (saved / "config.json").write_text(json.dumps({}))
    assert hub_model_id(saved) is None


@pytest.mark.parametrize(
    ("origin", "expected"), [("google-bert/bert-base-uncased", "google-bert/bert-base-uncased"),
                             ("", None)]
)  # fmt: skip
def test_card_base_model_of_a_local_folder(tmp_path, origin, expected):
    local = tmp_path / "models" / "base"
    run = _run(tmp_path, str(local), hub_origin=origin)
    card = model_card(run / "checkpoint-4", "org/debiased")
    assert card.data.base_model == expected
    assert str(tmp_path) not in str(card), "the card names no path of this machine"
    if expected:
        assert f"fine-tuned version of [`{expected}`]" in card.text


def test_card_of_a_hub_base_model_round_trips_its_results(tmp_path):
    run = _run(tmp_path, "google-bert/bert-base-uncased")
    card = model_card(run / "checkpoint-4", "org/debiased")
    card.save(tmp_path / "README.md")
    loaded = ModelCard.load(tmp_path / "README.md")
    assert loaded.data.base_model == "google-bert/bert-base-uncased"
    assert loaded.data.datasets is None  # generated corpus: no hub dataset to name
    values = {(r.metric_type, r.metric_args["when"]): r.metric_value
              for r in loaded.data.eval_results}  # fmt: skip
    assert values[("mean_abs_gap", "before")] == 1.5
    assert values[("mean_abs_gap", "after")] == 0.25
    text = loaded.text
    assert "generated occupational sentences" in text and "p = 0.5" in text
    assert "dropped by 83.3% (better)" in text
    assert "learning_rate" in text and "data_dir" not in text


def test_report_says_rose_when_the_gap_rose(tmp_path, capsys):
    from cdsbias.cli import main

    run = _run(tmp_path, "google-bert/bert-base-uncased", gaps=(0.74, 0.76))
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "mean |gap|" in x)
    assert "rose by 2.7% (worse)" in line and "-2.7%" not in out
    assert "held-out MLM loss (original text)" in out and "rose by 5.0%" in out
