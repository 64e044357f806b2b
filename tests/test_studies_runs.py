"""``cdsbias study`` with real cells: a tiny BERT (tests/tiny_models.py) fine-tuned for two
steps on 40 GAP documents, BEC-Pro at steps 0 and 2. Every item of the issue's "resume and
safety", with the sha256 of every file of the finished cells before and after:

- one failing cell (INLP with too few fit sentences) is recorded with its error line while
  the others finish, and the table shows it as failed;
- a rerun starts only the unfinished and failed cells; finished folders stay byte-identical;
- a finished cell whose spec changed is refused with the key that changed;
- the driver killed with SIGKILL mid-study: a second driver is refused while it lives, the
  rerun runs only what was unfinished, and the table is byte-identical to an
  uninterrupted study's;
- the Slurm path through submitit's own LocalExecutor.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from test_studies import tree_hashes

from cdsbias.cli import main

pytestmark = pytest.mark.slow

SMOKE = str(REPO / "recipes" / "smoke.yaml")
BIAS_BENCH_RACE = "race@bias-bench"


def spec_file(tmp: Path, model: Path, data: Path, **values) -> Path:
    spec = {
        "name": "tiny-study",
        "recipe": SMOKE,
        "models": {"tiny": str(model)},
        "overrides": {
            "init_from_scratch": False, "max_steps": 2, "save_steps": 2, "max_documents": 40,
            "bias_n_resamples": 50, "data_dir": str(data), "bias_data_dir": str(data),
        },
        "methods": {
            "cds": {},
            # 40 documents give INLP far fewer than its 100 sentences per class: it fails
            # when it fits, after the recipe was accepted.
            "inlp": {"posthoc_method": "inlp", "posthoc_only": True, "cds_mode": "none",
                     "inlp_iterations": 2},
        },
        "seeds": 2,
    }  # fmt: skip
    spec.update(values)
    path = tmp / "spec.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def finished_hashes(study: Path) -> dict[str, str]:
    """sha256 of every file of every finished cell (per the study's state records)."""
    hashes = {}
    for state in (study / "state").rglob("*.json"):
        record = json.loads(state.read_text())
        if record["status"] == "done":
            folder = study / "runs" / record["cell"]
            hashes.update({f"{record['cell']}/{k}": v for k, v in tree_hashes(folder).items()})
    return hashes


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from tiny_models import tiny_masked_lm

    return tiny_masked_lm("bert", tmp_path_factory.mktemp("model") / "bert")


@pytest.fixture(scope="module")
def study(tmp_path_factory, tiny, shared_data) -> tuple[Path, Path]:
    """An uninterrupted study, two cells at once: (spec, folder). One thread a cell (the
    same arithmetic in every cell of every study) for this module's tests only: a later test
    whose subprocess inherited it would compute otherwise than its in-process run."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OMP_NUM_THREADS", "1")
        tmp = tmp_path_factory.mktemp("study")
        spec = spec_file(tmp, tiny, shared_data)
        out = tmp / "study"
        assert main(["study", "run", str(spec), "--out", str(out), "--jobs", "2", "--table"]) == 1
        yield spec, out


def test_the_failing_cell_is_recorded_and_the_others_finish(study):
    _, out = study
    state = json.loads((out / "state" / "tiny" / "inlp" / "gender" / "seed-0.json").read_text())
    assert state["status"] == "failed"
    assert state["error"].startswith("INLP found too few fit sentences")
    for cell in ("base/gender/seed-0", "cds/gender/seed-0", "cds/gender/seed-1"):
        assert json.loads((out / "state" / "tiny" / f"{cell}.json").read_text())["status"] == "done"
        assert (out / "runs" / "tiny" / cell / "trainer_state.json").exists()
    table = (out / "table" / "table.md").read_text(encoding="utf-8")
    assert "| tiny | inlp (gender) |" in table and "0/2 seeds, 2 failed" in table
    assert "failed: tiny/inlp/gender/seed-1: INLP found too few fit sentences" in table
    assert "| tiny | cds (gender) |" in table and "2/2 seeds" in table


def test_rerun_starts_only_failed_cells_and_finished_ones_stay_byte_identical(study, capsys):
    spec, out = study
    before = finished_hashes(out)
    assert len(before) > 20  # three finished run folders: weights, points, results, ...
    capsys.readouterr()
    assert main(["study", "run", str(spec), "--out", str(out)]) == 1
    assert "5 cells, 3 finished, 2 to run" in capsys.readouterr().err
    assert finished_hashes(out) == before


def test_a_changed_spec_is_refused_with_the_key(study, tiny, shared_data, capsys):
    spec, out = study
    before = finished_hashes(out)
    values = yaml.safe_load(spec.read_text())
    values["overrides"]["learning_rate"] = 1e-3
    changed = spec.with_name("changed.yaml")
    changed.write_text(yaml.safe_dump(values), encoding="utf-8")
    capsys.readouterr()
    assert main(["study", "run", str(changed), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "learning_rate: '(unset)' -> 0.001" in err[0]
    assert finished_hashes(out) == before


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while not predicate():
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_sigkill_of_the_driver_then_rerun_gives_the_same_table(study, tiny, shared_data, tmp_path):
    spec, reference = study
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "cdsbias", "study", "run", str(spec), "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    driver = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        done = out / "state" / "tiny" / "base" / "gender" / "seed-0.json"
        _wait_for(lambda: done.exists() and '"done"' in done.read_text(), 300, "the first cell")
        running = out / "state" / "tiny" / "cds" / "gender" / "seed-0.json"
        _wait_for(running.exists, 60, "the second cell to start")
        # A second driver on the same folder is refused while the first lives.
        second = subprocess.run(command, env=env, capture_output=True, text=True)
        assert second.returncode == 2
        assert "is being run by another `cdsbias study run`" in second.stderr
        before = finished_hashes(out)
        finished = sum(json.loads(p.read_text())["status"] == "done"
                       for p in (out / "state").rglob("*.json"))  # fmt: skip
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    # The cell's training process died with its driver (no orphan races the rerun).
    cell_pid = json.loads(running.read_text()).get("cell_pid")
    if cell_pid is not None:
        _wait_for(lambda: not _alive(cell_pid), 30, "the killed driver's cell to end")
    status = subprocess.run([sys.executable, "-m", "cdsbias", "study", "status", str(out)],
                            capture_output=True, text=True)  # fmt: skip
    assert "running" not in status.stdout.split()
    rerun = subprocess.run([*command, "--table"], env=env, capture_output=True, text=True)
    assert rerun.returncode == 1  # the INLP cells fail again
    assert f"5 cells, {finished} finished, {5 - finished} to run" in rerun.stderr
    after = finished_hashes(out)
    assert {k: after[k] for k in before} == before
    for name in ("table.json", "table.md"):
        assert (out / "table" / name).read_bytes() == (reference / "table" / name).read_bytes()


def test_slurm_path_through_submitits_local_executor(tiny, shared_data, tmp_path):
    """submitit's LocalExecutor: the executor's parameters, the job array (map_array), each
    cell pickled into its own submitit process that records its state; sbatch is the one
    part that does not run here."""
    from cdsbias.studies.runner import run_study
    from cdsbias.studies.spec import load_spec

    spec = load_spec(spec_file(tmp_path, tiny, shared_data, methods={"cds": {}}, seeds=1))
    out = tmp_path / "slurm-study"
    counts = run_study(spec, out, executor="slurm", cluster="local")
    assert counts["done"] == 2
    logs = list((out / "slurm").glob("*_log.out"))
    assert logs, "submitit wrote no job logs"
    assert (out / "runs" / "tiny" / "cds" / "gender" / "seed-0" / "trainer_state.json").exists()


def test_bias_bench_study_at_tiny_scale(tiny, shared_data, tmp_path):
    """studies/bias_bench.yaml as shipped (its methods, their keys, Slurm keys) on race with
    one seed, through overrides: the smoke recipe's corpus and budget, the tiny model,
    CrowS-Pairs alone, no GLUE. INLP needs 100 sentences per class and the 200 documents
    give it 12 race sentences: it fails with its error; the other four methods finish."""
    from cdsbias.benchmarks.axis_scope import split_key

    out = tmp_path / "bias-bench"
    data = str(shared_data)
    code = main([
        "study", "run", str(REPO / "studies" / "bias_bench.yaml"),
        "init_from_scratch=false", f"data_dir={data}", f"bias_data_dir={data}",
        "max_documents=200", "max_steps=2", "save_steps=2", "gradient_accumulation_steps=1",
        "per_device_train_batch_size=8", "bias_n_resamples=50", "learning_rate=5e-4",
        "--out", str(out), "--model", f"tiny={tiny}", "--set", f"recipe={SMOKE}",
        "--set", "seeds=1", "--set", f"axes=[{BIAS_BENCH_RACE}]",
        "--set", "measure_axes=[race]",
        "--set", "downstream=null", "--set", "benchmarks=[crows_pairs]", "--jobs", "2",
        "--table",
    ])  # fmt: skip
    assert code == 1
    table = json.loads((out / "table" / "table.json").read_text())
    rows = {r["method"]: r for r in table["rows"]}
    assert set(rows) == {"base", "cda", "dropout", "inlp", "sentence-debias", "self-debias"}
    assert rows["inlp"]["failed"]["tiny/inlp/race@bias-bench/seed-0"].startswith(
        "INLP found too few fit"
    )
    assert all(rows[m]["done"] for m in rows if m != "inlp")
    scoped = {split_key(e["source"]) for e in table["entries"] if e["source"] != "heldout"}
    assert scoped == {("crows_pairs", "race")}
    assert {r["word_lists"] for r in table["rows"]} == {"bias-bench"}
    dropout = out / "runs" / "tiny" / "dropout" / "race@bias-bench" / "seed-0"
    recipe = yaml.safe_load((dropout / "recipe.yaml").read_text())
    assert recipe["hidden_dropout_prob"] == 0.2 and recipe["bias_axis"] == BIAS_BENCH_RACE
