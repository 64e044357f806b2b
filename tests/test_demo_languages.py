"""`make demo-de` and `make demo-da` in miniature: a German and a Danish demo model, each
fine-tuned with its language's CDS and scored with its language's benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cdsbias.cli import main as cli
from cdsbias.commands.report import run_summary
from cdsbias.demo.base_model import REPORT_FILE, DemoModelSettings, build_demo_model
from cdsbias.train.run import main as train_main

REPO = Path(__file__).resolve().parents[1]
# Far below the demos' 2,000 steps: enough to learn which profession *forms* are frequent
# (what BEC-Pro's target=profession reads), not the person-profession attention.
TINY = {"steps": 150, "sentences": 4000, "learning_rate": 1.5e-3}

pytestmark = pytest.mark.integration


def _train(recipe: str, base: Path, run: Path, data: Path, *extra: str) -> None:
    code = train_main([
        str(REPO / "recipes" / recipe), f"output_dir={run}", f"model_name_or_path={base}",
        "max_steps=40", "save_steps=20", "occupation_sentences=2000",
        f"bias_data_dir={data}", *extra,
    ])  # fmt: skip
    assert code == 0


def _profession_gaps(model: Path, data: Path, out: Path) -> dict[str, float]:
    argv = ["evaluate", str(model), "-b", "becpro", "--language", "de", "--option",
            "target=profession", "--data-dir", str(data), "--out", str(out), "--quiet"]  # fmt: skip
    assert cli(argv) == 0
    summary = json.loads((out / "becpro" / "summary.json").read_text())
    assert summary["target"] == "profession"
    return {"mean_abs_gap": summary["mean_abs_gap"]}


def test_german_demo_end_to_end(shared_data, tmp_path):
    settings = DemoModelSettings(language="de", **TINY)
    base = build_demo_model(tmp_path / "base", settings, progress=False, data_dir=shared_data)
    report = json.loads((base / REPORT_FILE).read_text())["benchmarks"]
    before = report["becpro[target=profession]"]
    # Known answer: the corpus has Elektriker far more often than Elektrikerin, and
    # Kindergärtnerin more often than Kindergärtner, and even a tiny model learns it.
    assert before["gap_male"] > 0.1 and before["gap_female"] < -0.1
    assert before["profession_test_p"] < 0.01
    run = tmp_path / "run"
    _train("demo_de.yaml", base, run, shared_data)
    summary = run_summary(run)
    assert summary["first_step"] == 0 and summary["last_step"] == 40
    assert "becpro" in summary["benchmarks"]
    after = _profession_gaps(run, shared_data, tmp_path / "after")
    assert after["mean_abs_gap"] < before["mean_abs_gap"]
    naive = tmp_path / "naive"
    _train("demo_de.yaml", base, naive, shared_data, "cds_agreement=false")
    effective = yaml.safe_load((naive / "recipe.yaml").read_text())
    assert effective["cds_agreement"] is False


def test_danish_demo_end_to_end(shared_data, tmp_path):
    settings = DemoModelSettings(language="da", **TINY)
    base = build_demo_model(tmp_path / "base", settings, progress=False, data_dir=shared_data)
    report = json.loads((base / REPORT_FILE).read_text())["benchmarks"]
    assert set(report) == {"dawinobias", "abc"}
    assert all("error" not in metrics for metrics in report.values())
    run = tmp_path / "run"
    _train("demo_da.yaml", base, run, shared_data)
    summary = run_summary(run)
    assert set(summary["benchmarks"]) == {"dawinobias", "abc"}
    assert summary["last_step"] == 40 and summary["heldout_loss_change"] is not None
