"""Two CPU processes (gloo): the callback's gathered BEC-Pro rows equal one-process scoring."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cdsbias.benchmarks.becpro import BecPro
from cdsbias.runs.points import read_points
from cdsbias.scoring import MaskedLMScorer
from cdsbias.train.run import main as train_main

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.integration


def launcher() -> list[str]:
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    if accelerate is None:
        pytest.skip("accelerate launcher not installed")
    # `--cpu` would start one process; --multi_gpu with use_cpu=true gives 2 gloo processes.
    return [accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no"]  # fmt: skip


def test_two_processes_equal_one(tmp_path, shared_data):
    args = [
        "recipes/smoke.yaml", f"data_dir={shared_data}", f"bias_data_dir={shared_data}",
        "max_steps=4", "save_steps=2", "report_to=none", "use_cpu=true",
    ]  # fmt: skip
    two = tmp_path / "two"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [*launcher(), "train.py", *args, f"output_dir={two}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    one = tmp_path / "one"
    assert train_main([*args, f"output_dir={one}"]) == 0

    assert [p["step"] for p in read_points(two)] == [0, 2, 4]
    # Step 0: both runs score the same seeded initial model.
    rows_two = pd.read_csv(two / "bias" / "step-0" / "becpro" / "rows.tsv", sep="\t")
    rows_one = pd.read_csv(one / "bias" / "step-0" / "becpro" / "rows.tsv", sep="\t")
    assert rows_two[["Sentence", "Person"]].equals(rows_one[["Sentence", "Person"]])
    np.testing.assert_allclose(rows_two["association"], rows_one["association"], atol=1e-6, rtol=0)
    # Every checkpoint: the 2-process gathered rows equal 1-process scoring of that model.
    for step in (2, 4):
        gathered = pd.read_csv(two / "bias" / f"step-{step}" / "becpro" / "rows.tsv", sep="\t")
        scorer = MaskedLMScorer.from_pretrained(str(two / f"checkpoint-{step}"), batch_size=128)
        single = BecPro().score(scorer, BecPro().load())
        assert len(gathered) == len(single) == 5400
        assert gathered["Sentence"].tolist() == single["Sentence"].tolist()
        np.testing.assert_allclose(
            gathered["association"], single["association"], atol=1e-6, rtol=0
        )
        np.testing.assert_allclose(gathered["p_tm"], single["p_tm"], rtol=1e-5)


@pytest.mark.parametrize("method", ["lora", "adapter"])
def test_adapter_methods_train_on_two_processes(tmp_path, shared_data, zoo, method):
    """peft LoRA and the bottleneck adapter under DDP: the callback's gathered rows equal
    one-process scoring of the saved adapter checkpoint."""
    from cdsbias.scoring import load_masked_lm

    out = tmp_path / "run"
    args = [
        "recipes/smoke.yaml", "init_from_scratch=false", f"model_name_or_path={zoo['bert']}",
        f"peft_method={method}", f"data_dir={shared_data}", f"bias_data_dir={shared_data}",
        "max_steps=4", "save_steps=4", "bias_eval_at_start=false", "report_to=none",
        "use_cpu=true", f"output_dir={out}",
    ]  # fmt: skip
    done = subprocess.run(
        [*launcher(), "train.py", *args], cwd=REPO, capture_output=True, text=True,
        timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert [p["step"] for p in read_points(out)] == [4]
    gathered = pd.read_csv(out / "bias" / "step-4" / "becpro" / "rows.tsv", sep="\t")
    model, tokenizer = load_masked_lm(out / "checkpoint-4", progress=False)
    single = BecPro().score(MaskedLMScorer(model, tokenizer, batch_size=128), BecPro().load())
    assert gathered["Sentence"].tolist() == single["Sentence"].tolist()
    np.testing.assert_allclose(gathered["association"], single["association"], atol=1e-6, rtol=0)
