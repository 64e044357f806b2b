"""Downstream results in training runs: the recipe key, compare's columns and rank
correlations, the card's section."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import ASSETS, REPO
from test_compare import HEADLINE, make_run

from cdsbias.downstream.after_training import main as train_main
from cdsbias.runs.compare import compare
from cdsbias.runs.downstream_results import (
    DOWNSTREAM_DIR,
    card_section,
    rank_correlation,
    read_downstream,
)

pytestmark = pytest.mark.usefixtures("one_thread")
SMOKE = REPO / "recipes" / "smoke.yaml"


def _summary(base: float, final: float) -> dict:
    """A summary.json as ``cdsbias downstream`` writes it after a training run."""

    def entry(role: str, value: float) -> dict:
        metric = {"value": value, "ci_low": value - 0.05, "ci_high": value + 0.05,
                  "n_examples": 100, "n_seeds": 3}  # fmt: skip
        return {"model": role, "role": role, "variant": "none", "metrics": {"rms": metric}}

    return {
        "task": "occupations", "description": "occupation classification",
        "citation": "@article{x}", "seeds": [0, 1, 2],
        "data": {"data": "hub:x", "n_train": 1000, "n_test": 100},
        "training": {"learning_rate": 2e-5, "epochs": 3.0, "batch_size": 32},
        "headline": [{"key": "rms", "label": "TPR gap RMS", "unit": "TPR", "better": "lower",
                      "ideal": 0.0}],
        "results": [entry("base", base), entry("final", final)],
    }  # fmt: skip


def test_compare_adds_downstream_columns_and_the_rank_correlation(tmp_path):
    # Intrinsic gap after training 0.5, 1.0, 1.5, 2.0; extrinsic RMS 0.10, 0.20, 0.30, 0.25:
    # ranks (1, 2, 3, 4) and (1, 2, 4, 3), rho = 1 - 6 * 2 / (4 * 15) = 0.8.
    folders = []
    for index, (gap, rms) in enumerate(((0.5, 0.1), (1.0, 0.2), (1.5, 0.3), (2.0, 0.25))):
        before = {"gap": 2.0, "acc": 0.6, "ss": 60.0, "effect": 0.1, "zero": 0.0}
        folder = make_run(tmp_path / f"run{index}",
                          {"bench_a": (HEADLINE, [before, {**before, "gap": gap}])})  # fmt: skip
        (folder / DOWNSTREAM_DIR / "occupations").mkdir(parents=True)
        (folder / DOWNSTREAM_DIR / "occupations" / "summary.json").write_text(
            json.dumps(_summary(0.4, rms))
        )
        folders.append(folder)
    table = compare(folders, out=tmp_path / "out")
    assert "| run0 | 0.400 [0.350, 0.450] → 0.100 [0.050, 0.150] |" in table
    line = next(x for x in table.splitlines() if x.startswith("| bench_a/gap | occupations/rms"))
    assert "| +0.80 |" in line and line.endswith("| 4 |")
    rows = pd.read_csv(tmp_path / "out" / "comparison.csv")
    assert list(rows["downstream:occupations/rms"]) == [0.1, 0.2, 0.3, 0.25]


def test_rank_correlation_interval_on_known_cases():
    # A monotone relation: every resample (constant ones dropped) has rho 1.
    assert rank_correlation([1, 2, 3, 4, 5], [2, 4, 5, 9, 10]) == pytest.approx((1.0, 1.0, 1.0))
    rho, low, high = rank_correlation([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6], seed=1)
    assert rho == pytest.approx(1 - 6 * 4 / (6 * 35)) and low < rho <= high <= 1.0
    assert all(v != v for v in rank_correlation([1, 2], [3, 4]))  # n < 3: NaN


def test_card_section_shows_base_and_final_with_seeds_and_data():
    lines = card_section({"occupations": _summary(0.4, 0.1)})
    text = "\n".join(lines)
    assert text.startswith("## Downstream") and "3 seed(s) (0, 1, 2)" in text
    assert "1000 training examples of hub:x" in text and "100 test examples" in text
    assert "| base | none | 0.400 [0.350, 0.450] |" in text
    assert "| final | none | 0.100 [0.050, 0.150] |" in text


def test_an_unknown_downstream_task_fails_before_training(tmp_path, capsys):
    out = tmp_path / "run"
    code = train_main([str(SMOKE), f"output_dir={out}", "downstream_tasks=[bias_in_bio]"])
    assert code == 2 and not out.exists()
    assert "Did you mean 'bias_in_bios'?" in capsys.readouterr().err


# A whole train.py run and a fine-tuning after it: ~20 s, end to end.
@pytest.mark.slow
def test_train_py_runs_the_downstream_task_on_the_final_model(tmp_path, shared_data):
    out = tmp_path / "run"
    spec = json.dumps(
        {
            "bias_in_bios": {
                "data_dir": str(ASSETS / "downstream" / "bias_in_bios"),
                "n_resamples": 20,
                "min_group_examples": 2,
            }
        }
    )
    code = train_main([str(SMOKE), f"output_dir={out}", f"data_dir={shared_data}",
                       f"bias_data_dir={shared_data}", "max_steps=2", "save_steps=2",
                       "max_documents=40", "bias_n_resamples=50", f"downstream_tasks={spec}",
                       "downstream_seeds=1"])  # fmt: skip
    assert code == 0
    (summary,) = read_downstream(out).values()
    (entry,) = summary["results"]  # from scratch: no base model, the final one only
    assert entry["role"] == "final" and entry["model"] == str(out)
    assert summary["seeds"] == [0] and summary["data"]["n_train"] == 24
    # The final folder's card shows it; a checkpoint's card does not claim it.
    from cdsbias.runs.card import model_card

    card = str(model_card(out, "org/debiased"))
    assert "## Downstream" in card and "### bias_in_bios" in card and "| final | none |" in card
    assert "dearteaga2019bias" in card
    checkpoint = next(out.glob("checkpoint-*"))
    assert "## Downstream" not in str(model_card(checkpoint, "org/debiased"))
