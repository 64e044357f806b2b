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


SPY = """
import os

import cdsbias.train.posthoc_fit as posthoc_fit

_fit = posthoc_fit.fit_posthoc


def fit_posthoc(*args, **kwargs):
    with open({log!r}, "a") as log:
        log.write(os.environ.get("RANK", "?") + "\\n")
    return _fit(*args, **kwargs)


posthoc_fit.fit_posthoc = fit_posthoc
"""


def test_a_posthoc_fit_on_two_processes_is_fitted_once(tmp_path, becpro, zoo):
    """INLP under a 2-process launch: the main process fits, the other receives the map;
    the run folder holds one record and map, equal to a one-process run's, and both ranks
    scored the folded model (the gathered post-hoc rows equal the one-process run's)."""
    import json

    from tests_helpers import overrides

    from cdsbias.methods.erasure import ERASURE_FILE, ERASURE_RECORD, AffineErasure

    def keys(out: Path) -> list[str]:
        return [
            "recipes/smoke.yaml",
            *overrides(out, becpro, "init_from_scratch=false", f"model_name_or_path={zoo['bert']}",
                       "posthoc_only=true", "posthoc_method=inlp", "inlp_iterations=3",
                       "posthoc_word_pairs=pronoun_pairs.json",
                       "posthoc_min_sentences_per_class=5", "report_to=none", "use_cpu=true"),
        ]  # fmt: skip

    # Each launched process records its rank when it fits (a sitecustomize wrapping
    # fit_posthoc in the launched interpreters only): the main process alone may.
    fits = tmp_path / "fits.txt"
    spy = tmp_path / "spy"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(SPY.format(log=str(fits)))
    two, one = tmp_path / "two", tmp_path / "one"
    path = os.pathsep.join([str(spy), str(REPO), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [*launcher(), "train.py", *keys(two)], cwd=REPO, capture_output=True, text=True,
        timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": path},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert fits.read_text().split() == ["0"], "the fit ran on another rank too"
    assert train_main(keys(one)) == 0
    assert sorted(p.name for p in two.glob("posthoc_*")) == sorted([ERASURE_RECORD, ERASURE_FILE])
    assert not list(two.glob("*.tmp*")) and not list(two.glob(".*tmp*"))
    fitted, alone = AffineErasure.load(two), AffineErasure.load(one)
    np.testing.assert_array_equal(fitted.projection, alone.projection)
    record = json.loads((two / ERASURE_RECORD).read_text())
    assert record["dev_accuracy"] == alone.dev_accuracy and record["rank_removed"] > 0
    assert [(p["step"], bool(p.get("posthoc"))) for p in read_points(two)] == [
        (0, False), (0, True)
    ]  # fmt: skip
    posthoc = Path("bias") / "step-0-posthoc" / "becpro" / "rows.tsv"
    gathered = pd.read_csv(two / posthoc, sep="\t")
    single = pd.read_csv(one / posthoc, sep="\t")
    assert gathered["Sentence"].tolist() == single["Sentence"].tolist()
    np.testing.assert_allclose(gathered["association"], single["association"], atol=1e-6, rtol=0)
