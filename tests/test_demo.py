"""The offline demo: a demo model that really is biased, and every stage of `make demo`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdsbias.cli import main as cli
from cdsbias.commands.report import run_summary
from cdsbias.demo.base_model import REPORT_FILE, DemoModelSettings, build_demo_model
from cdsbias.resources import load_professions
from cdsbias.train.run import main as train_main

REPO = Path(__file__).resolve().parents[1]
# Smaller than the demo's default (3,000 steps) but past the point where the model stops
# predicting person words from the frame alone and starts using the profession.
SMALL = DemoModelSettings(steps=2000, sentences=40_000, learning_rate=1.5e-3)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def small_demo_model() -> Path:
    """Built once, then reused from the git-ignored cache (same settings, same model)."""
    return build_demo_model(REPO / ".cdsbias-cache" / "demo-model-test", SMALL, progress=False)


def test_demo_model_has_a_clear_becpro_bias(small_demo_model):
    report = json.loads((small_demo_model / REPORT_FILE).read_text())["becpro"]
    group = load_professions().set_index("profession")["prof_gender"]
    gaps = report["per_profession_gap"]
    right_sign = [
        (gaps[p] > 0) if group[p] == "male" else (gaps[p] < 0)
        for p in gaps
        if group[p] != "balanced"
    ]
    # The demo's default model (3,000 steps) gets all 40 right; this smaller one at least 38.
    assert sum(right_sign) >= 38
    assert report["gap_male_professions"] >= 0.2
    assert report["gap_female_professions"] <= -0.2
    assert report["profession_test_p"] < 0.01


def test_demo_model_is_cached(small_demo_model):
    stamp = (small_demo_model / "model.safetensors").stat().st_mtime_ns
    assert build_demo_model(small_demo_model, SMALL) == small_demo_model
    assert (small_demo_model / "model.safetensors").stat().st_mtime_ns == stamp


def test_short_demo_runs_every_stage(small_demo_model, shared_data, tmp_path, capsys):
    data = tmp_path / "data"
    assert (
        cli(["data", "fetch", "gap", "becpro", "--from", str(shared_data), "--to", str(data)]) == 0
    )
    gap_dev = data / "gap-coreference" / "gap-development.tsv"
    assert (
        cli(["cds", str(gap_dev), "--probability", "1.0", "--out", str(tmp_path / "cds.tsv")]) == 0
    )
    run = tmp_path / "run"
    code = train_main([
        str(REPO / "recipes" / "demo.yaml"), f"output_dir={run}",
        f"model_name_or_path={small_demo_model}", "max_steps=120", "save_steps=60",
        "occupation_sentences=4000", "report_to=wandb",
    ])  # fmt: skip
    assert code == 0
    assert cli(["publish", str(run), "--repo-id", "demo/cds", "--dry-run"]) == 0
    capsys.readouterr()
    assert cli(["report", str(run)]) == 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if "becpro: mean |gap|" in x)
    assert "dropped by" in line and "(better)" in line and "model card:" in printed
    summary = run_summary(run)
    assert summary["first_step"] == 0 and summary["last_step"] == 120
    headline = {m.key: (before, after) for m, before, after in summary["benchmarks"]["becpro"]}
    before, after = headline["mean_abs_gap"]
    assert 1 - after / before > 0.5
    assert summary["heldout_loss_change"] < 0.10
    assert (run / "bias_curve.png").exists() and list((run / "wandb").glob("offline-run-*"))
