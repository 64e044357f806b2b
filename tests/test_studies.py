"""``cdsbias study``: the spec and its errors, the grid, the lock, resume and the table.

The driver's logic runs here against cells whose process is a stand-in (a few lines of
Python writing a run folder with known points, or failing with an ``error:`` line), so
every rule is checked in seconds; tests/test_studies_runs.py (slow) runs real tiny cells.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO

from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.studies import job
from cdsbias.studies.cells import Cell, changed_key, check_cells, expand
from cdsbias.studies.runner import longest_first, run_study
from cdsbias.studies.spec import load_spec
from cdsbias.studies.state import StudyFolder
from cdsbias.studies.stats import SeedValues, interval, standard_error, two_sided_p

SMOKE = str(REPO / "recipes" / "smoke.yaml")
#: Keys that make smoke.yaml load without data or a model (nothing is read here).
QUICK = {
    "init_from_scratch": False,
    "dataset": "occupations",
    "max_documents": None,
    "max_steps": 2,
    "save_steps": 2,
}

# A stand-in cell process: writes the run folder train.py would (two points: step 0 and
# the end; BEC-Pro's headline metric and the held-out loss), or fails like train.py does.
FAKE_CELL = """
import json, sys
from pathlib import Path
out, method, seed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
if method == "broken":
    print("some output"); print("error: INLP found too few fit sentences: 4 male"); sys.exit(2)
out.mkdir(parents=True)
after = {"base": 2.0, "cda": 1.0 + 0.1 * seed, "cds": 0.5 + 0.2 * seed, "dropout": 1.9}[method]
def point(step, value, loss):
    metric = {"key": "mean_abs_gap", "label": "mean |gap|", "unit": "nats", "better": "lower",
              "ideal": 0.0}
    entry = {"metrics": {"mean_abs_gap": value}, "headline": [metric],
             "curve": {"mean |gap|": [value, value - 0.196, value + 0.196]}}
    return {"step": step, "benchmarks": {"becpro": entry}, "heldout_loss": loss}
points = [point(0, 2.0, 3.0)] + ([] if method == "base" else [point(10, after, 3.1)])
(out / "bias_metrics.jsonl").write_text("".join(json.dumps(p) + "\\n" for p in points))
(out / "run_info.json").write_text(json.dumps({"base_model": None}))
(out / "trainer_state.json").write_text("{}")
(out / "recipe.yaml").write_text(f"run_name: {method}\\n")
import os
(out / "group.txt").write_text(os.environ.get("WANDB_RUN_GROUP", ""))
"""


def write_spec(tmp_path: Path, **values) -> Path:
    spec = {
        "name": "demo",
        "recipe": SMOKE,
        "models": {"tiny": str(tmp_path / "model")},
        "overrides": dict(QUICK),
        "methods": {"cda": {"cds_mode": "cda"}, "cds": {}},
        "seeds": 2,
    }
    spec.update(values)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


@pytest.fixture
def fake_cells(tmp_path, monkeypatch):
    """Cells run the stand-in process instead of train.py."""
    script = tmp_path / "fake_cell.py"
    script.write_text(FAKE_CELL, encoding="utf-8")

    def command(self, cell, study):
        return [sys.executable, str(script), str(cell.folder(study)), cell.method, str(cell.seed)]

    monkeypatch.setattr(job.Launch, "command", command)
    return script


def tree_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``, by relative path."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# ------------------------------------------------------------------ the spec and the grid
def test_the_grid_names_each_cell_and_scores_base_once_per_model_and_axis(tmp_path):
    spec = load_spec(write_spec(tmp_path, axes=["gender", "race"], seeds=[0, 3]))
    cells = expand(spec)
    ids = [c.id for c in cells]
    assert ids[:2] == ["tiny/base/gender/seed-0", "tiny/base/race/seed-0"]
    assert "tiny/cda/race/seed-3" in ids and len(ids) == 2 + 2 * 2 * 2
    cda = next(c for c in cells if c.id == "tiny/cda/race/seed-3")
    assert cda.folder(tmp_path) == tmp_path / "runs" / "tiny" / "cda" / "race" / "seed-3"
    assert cda.keys["bias_axis"] == "race" and cda.keys["seed"] == 3
    assert cda.keys["cds_mode"] == "cda" and cda.keys["max_steps"] == 2
    base = cells[0]
    assert base.keys["cds_mode"] == "none" and base.is_base


def test_an_axis_label_names_the_folder_and_its_reference_the_bias_axis(tmp_path):
    words = "race@bias-bench"
    spec = load_spec(write_spec(tmp_path, axes={"bb-race": words}, seeds=1))
    cells = expand(spec)
    assert [c.id for c in cells] == [
        "tiny/base/bb-race/seed-0", "tiny/cda/bb-race/seed-0", "tiny/cds/bb-race/seed-0",
    ]  # fmt: skip
    assert {c.keys["bias_axis"] for c in cells} == {words}
    check_cells(cells, tmp_path / "study")  # bias-bench's race list is a valid bias_axis


def test_a_changed_key_changes_the_hash_and_is_named(tmp_path):
    one = expand(load_spec(write_spec(tmp_path)))[1]
    two = Cell(one.model, one.method, one.axis, one.seed, one.recipe, {**one.keys, "max_steps": 3})
    assert one.spec_hash() != two.spec_hash()
    assert changed_key(one.record(), two.record()) == "max_steps: 2 -> 3"
    assert one.spec_hash() == expand(load_spec(write_spec(tmp_path)))[1].spec_hash()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"metods": {}}, "unknown study key 'metods'. Did you mean 'methods'?"),
        ({"methods": {"inlp": {"posthoc_methd": "inlp"}}}, "Unknown recipe key 'posthoc_methd'"),
        ({"axes": ["gendr"]}, "Unknown bias axis 'gendr'"),
        ({"benchmarks": ["crows_pair"]}, "crows_pair"),
        ({"downstream": ["glu"]}, "glu"),
        ({"axes": ["race"], "overrides": {**QUICK, "cds_language": "de",
                                          "occupation_language": "de"}}, "has no 'race' axis"),
        ({"methods": {"base": {}}}, "'base' is the undebiased model's row"),
        ({"overrides": {"seed": 3}}, "overrides.seed: the study sets seed"),
        ({"methods": {"cda": {"published_as": "CDAA"}}}, "unknown published method 'CDAA'; "
         "known: CDA, Dropout, INLP, SentenceDebias, Self-Debias. Did you mean 'CDA'?"),
    ],
)  # fmt: skip
def test_a_spec_error_is_one_line_before_any_cell(tmp_path, capsys, values, message):
    out = tmp_path / "study"
    code = main(["study", "run", str(write_spec(tmp_path, **values)), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert not out.exists()


def test_a_spec_or_recipe_that_is_not_utf8_is_one_line(tmp_path, capsys):
    from test_refused_outputs import one_error

    from cdsbias.train.config import load_recipe

    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"output_dir: caf\xe9\n")
    error = one_error(capsys, ["study", "run", str(latin)])
    assert error.endswith("is not UTF-8 text (invalid continuation byte at byte 15); save the "
                          "study spec as UTF-8.")  # fmt: skip
    with pytest.raises(CdsbiasError, match="save the recipe as UTF-8"):
        load_recipe(latin)


# ------------------------------------------------------------------ running and resuming
def test_a_failing_cell_is_recorded_and_the_others_finish(tmp_path, fake_cells, capsys):
    spec_path = write_spec(tmp_path, methods={"cda": {}, "broken": {}, "cds": {}})
    out = tmp_path / "study"
    code = main(["study", "run", str(spec_path), "--out", str(out), "--jobs", "2"])
    assert code == 1  # a failed cell: the study did not finish
    capsys.readouterr()
    assert main(["study", "status", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    status = {line.split()[1]: line.split()[0] for line in lines}
    assert status["tiny/broken/gender/seed-0"] == "failed"
    assert sum(s == "done" for s in status.values()) == 5
    failed = next(line for line in lines if "broken/gender/seed-1" in line)
    assert failed.endswith("INLP found too few fit sentences: 4 male")
    assert main(["study", "table", str(out)]) == 0
    table = (out / "table" / "table.md").read_text(encoding="utf-8")
    assert "| tiny | broken (gender) |" in table and "0/2 seeds, 2 failed" in table
    assert "failed: tiny/broken/gender/seed-0: INLP found too few fit sentences: 4 male" in table


def test_rerun_runs_only_unfinished_cells_and_never_rewrites_finished_ones(
    tmp_path, fake_cells, capsys
):
    spec_path = write_spec(tmp_path, methods={"cda": {}, "broken": {}})
    out = tmp_path / "study"
    main(["study", "run", str(spec_path), "--out", str(out)])
    before = tree_hashes(out / "runs")
    states = {str(p): p.read_bytes() for p in (out / "state").rglob("*.json")}
    # An interrupted cell: its driver recorded it running, then died.
    folder = StudyFolder(out)
    cells = expand(load_spec(spec_path))
    interrupted = next(c for c in cells if c.id == "tiny/cda/gender/seed-1")
    folder.write_state(interrupted, "running", pid=1)
    assert folder.status(interrupted).status == "pending"
    capsys.readouterr()
    main(["study", "run", str(spec_path), "--out", str(out)])
    err = capsys.readouterr().err
    assert "3 cells to run" not in err and "5 cells, 2 finished, 3 to run" in err
    after = tree_hashes(out / "runs")
    finished = {k: v for k, v in before.items() if "cda/gender/seed-1" not in k}
    assert {k: after[k] for k in finished} == finished  # byte-identical
    # The state of the cell that stayed finished was not written again either.
    kept = out / "state" / "tiny" / "cda" / "gender" / "seed-0.json"
    assert kept.read_bytes() == states[str(kept)]


def test_cells_start_longest_expected_first(tmp_path):
    # Unmeasured: training cells first, then the scoring-only ones (base, post-hoc only),
    # each group in the spec's order.
    methods = {"inlp": {"posthoc_only": True, "cds_mode": "none"}, "cda": {}, "cds": {}}
    spec_path = write_spec(tmp_path, methods=methods, seeds=2)
    cells = expand(load_spec(spec_path))
    folder = StudyFolder(tmp_path / "study")
    order = [c.id for c in longest_first(folder, cells, cells)]
    assert order == [
        "tiny/cda/gender/seed-0", "tiny/cda/gender/seed-1", "tiny/cds/gender/seed-0",
        "tiny/cds/gender/seed-1", "tiny/base/gender/seed-0", "tiny/inlp/gender/seed-0",
        "tiny/inlp/gender/seed-1",
    ]  # fmt: skip
    # Measured: seed 0's recorded seconds stand for the method's other seeds.
    by_id = {c.id: c for c in cells}
    for cell_id, seconds in (("tiny/cda/gender/seed-0", 10.0), ("tiny/cds/gender/seed-0", 30.0),
                             ("tiny/inlp/gender/seed-0", 50.0)):  # fmt: skip
        cell = by_id[cell_id]
        cell.folder(folder.path).mkdir(parents=True)
        (cell.folder(folder.path) / "trainer_state.json").write_text("{}")
        folder.write_state(cell, "done", seconds=seconds)
    todo = [c for c in cells if c.seed == 1 or c.is_base]
    order = [c.id for c in longest_first(folder, todo, cells)]
    assert order == [
        "tiny/inlp/gender/seed-1", "tiny/cds/gender/seed-1", "tiny/cda/gender/seed-1",
        "tiny/base/gender/seed-0",
    ]  # fmt: skip


def test_a_finished_cell_whose_spec_changed_is_refused_with_the_key(tmp_path, fake_cells, capsys):
    out = tmp_path / "study"
    main(["study", "run", str(write_spec(tmp_path, methods={"cda": {}})), "--out", str(out)])
    before = tree_hashes(out / "runs")
    capsys.readouterr()
    changed = write_spec(tmp_path, methods={"cda": {"learning_rate": 1e-3}})
    assert main(["study", "run", str(changed), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tiny/cda/gender/seed-0" in err[0]
    assert "learning_rate: '(unset)' -> 0.001" in err[0] and "--rerun-changed" in err[0]
    assert tree_hashes(out / "runs") == before
    assert main(["study", "run", str(changed), "--out", str(out), "--rerun-changed"]) == 0
    state = json.loads((out / "state" / "tiny" / "cda" / "gender" / "seed-0.json").read_text())
    assert state["record"]["keys"]["learning_rate"] == 1e-3


def test_a_second_driver_is_refused_by_the_lock(tmp_path, capsys):
    spec_path = write_spec(tmp_path)
    out = tmp_path / "study"
    with StudyFolder(out).lock():
        assert main(["study", "run", str(spec_path), "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is being run by another `cdsbias study run`" in err[0]
        assert StudyFolder(out).locked()
    assert not StudyFolder(out).locked()  # released with its holder


def test_status_of_a_folder_that_is_no_study_is_one_line(tmp_path, capsys):
    assert main(["study", "status", str(tmp_path)]) == 2
    assert "is not a study folder" in capsys.readouterr().err


# ------------------------------------------------------------------ the numbers
def test_standard_error_is_read_from_a_95_percent_interval():
    assert standard_error([1.0, 1.0 + 2 * 1.959963984540054]) == pytest.approx(1.0, rel=1e-12)
    assert standard_error(None) == 0.0 and standard_error([None, 1.0]) == 0.0


def test_seed_level_bootstrap_by_hand():
    # Two seeds, no test-example error: a replicate's mean is 1, 2 or 3 with probability
    # 1/4, 1/2, 1/4, so the 95% percentile interval is [1, 3].
    values = SeedValues((1.0, 3.0), (0.0, 0.0))
    assert values.mean == 2.0 and values.sd == pytest.approx(math.sqrt(2))
    reps = values.replicates(np.random.default_rng(0), n=4000)
    assert set(np.unique(reps)) == {1.0, 2.0, 3.0}
    assert np.mean(reps == 2.0) == pytest.approx(0.5, abs=0.03)  # 4000 draws: SE 0.008
    assert interval(reps) == (1.0, 3.0)


def test_a_seed_independent_value_has_an_sd_of_exactly_zero():
    # The demo's SentenceDebias mean |gap| in each of three seeds: numpy's SD of the three
    # equal floats was 1.36e-16 on this machine (its mean an ulp off them), not 0.
    values = SeedValues((0.9770762235940331,) * 3, (0.0,) * 3)
    assert values.sd == 0.0 and SeedValues((1.0,), (0.0,)).sd is None


def test_one_seed_gives_the_test_example_interval():
    # Level 2 alone: normal with SE 0.5, so the 95% interval is 10 +- 0.98 (to Monte-Carlo
    # error of the 2.5% quantile over 20000 draws: about 0.02).
    reps = SeedValues((10.0,), (0.5,)).replicates(np.random.default_rng(1), n=20000)
    low, high = interval(reps)
    assert low == pytest.approx(10 - 0.98, abs=0.03) and high == pytest.approx(10 + 0.98, abs=0.03)


def test_two_sided_bootstrap_p():
    assert two_sided_p(np.array([1.0, 2.0, 3.0, -1.0])) == 0.5
    assert two_sided_p(np.array([1.0, 2.0])) == 0.0
    assert two_sided_p(np.array([0.0, 0.0])) == 1.0


def test_the_table_by_hand(tmp_path, fake_cells, capsys):
    spec_path = write_spec(tmp_path, methods={"cda": {}, "cds": {}, "dropout": {}})
    out = tmp_path / "study"
    assert main(["study", "run", str(spec_path), "--out", str(out), "--table"]) == 0
    data = json.loads((out / "table" / "table.json").read_text())
    entries = {(e["method"], e["column"]): e for e in data["entries"]}
    cda = entries["cda", "becpro/mean_abs_gap"]
    # Seeds 0 and 1: 1.0 and 1.1; change against each run's own step 0 (2.0).
    assert cda["mean"] == pytest.approx(1.05)
    assert cda["seed_sd"] == pytest.approx(math.sqrt(0.005))  # sqrt(2 * 0.05^2 / 1)
    assert cda["change"] == pytest.approx(-0.95) and cda["p"] == 0.0 and not cda["same_as_base"]
    # The curve's interval is +-0.196, an SE of 0.1 per point: level 2 is in.
    assert cda["examples_level"] and cda["ci_low"] < 1.0 and cda["ci_high"] > 1.1
    cds = entries["cds", "becpro/mean_abs_gap"]
    assert cds["best"] and cds["mean"] == pytest.approx(0.6)
    # cda - cds is 0.45 with a bootstrap SD near 0.1 (seed SDs 0.07 and 0.14 over 2
    # seeds, each point's SE 0.1): its interval is far from 0, so cda is not "as good".
    assert cda["same_as_best"] is False
    dropout = entries["dropout", "becpro/mean_abs_gap"]
    assert dropout["same_as_base"] and not dropout["same_as_best"]
    base = entries["base", "becpro/mean_abs_gap"]
    assert base["mean"] == 2.0 and base["change"] is None
    loss = entries["cda", "heldout_loss"]
    assert loss["change"] == pytest.approx(0.1) and not loss["examples_level"]
    for name in ("table.md", "table.csv", "heatmap.png", "pareto.png"):
        assert (out / "table" / name).stat().st_size > 0
    # The ranking of the three methods by mean |gap| (see test_ranking_by_hand).
    ranking = next(r for r in data["rankings"] if r["column"] == "becpro/mean_abs_gap")
    assert ranking["order"] == ["cds (gender)", "cda (gender)", "dropout (gender)"]
    assert ranking["pairs"] == 3 and len(ranking["pair_orders"]) == 3
    table = (out / "table" / "table.md").read_text(encoding="utf-8")
    assert "ranking, tiny, becpro: mean |gap| (nats; lower is better): cds (gender) <" in table
    csv_lines = (out / "table" / "table.csv").read_text().splitlines()
    assert csv_lines[0].startswith("model,method,axis,word_lists,column")
    assert len(csv_lines) == 1 + 4 * 2  # 4 rows x (becpro, held-out loss)


def test_published_values_of_a_method_sit_beside_its_row(tmp_path, fake_cells, monkeypatch):
    from cdsbias.benchmarks import get_benchmark
    from cdsbias.benchmarks.published import PublishedValue

    values = (
        PublishedValue("bert-base-uncased", "mean_abs_gap", 2.1, "Paper, Table 1, BERT",
                       "their protocol"),
        PublishedValue("bert-base-uncased", "mean_abs_gap", 0.5, "Paper, Table 1, BERT + CDA",
                       "their protocol", method="CDA", fitted_axis="gender",
                       word_lists="bias-bench"),
    )  # fmt: skip
    monkeypatch.setattr(get_benchmark("becpro"), "published", values)
    methods = {"cda": {"published_as": "CDA"}, "cds": {}}
    out = tmp_path / "study"
    main(["study", "run", str(write_spec(tmp_path, methods=methods)), "--out", str(out)])
    for info in (out / "runs").rglob("run_info.json"):  # the cells scored bert-base-uncased
        info.write_text(json.dumps({"base_model": "bert-base-uncased"}))
    assert main(["study", "table", str(out)]) == 0
    notes = [line for line in (out / "table" / "table.md").read_text().splitlines()
             if line.startswith("- published beside")]  # fmt: skip
    assert notes == [
        "- published beside tiny base, becpro: mean_abs_gap: measured 2; published: 2.10 "
        "(Paper, Table 1, BERT; their protocol)",
        "- published beside tiny cda (gender), becpro: mean_abs_gap: measured 1.05; published: "
        "0.50 (Paper, Table 1, BERT + CDA; their protocol) -- not like for like: fitted on "
        "cdsbias word lists here, bias-bench's there",
    ]  # cds has no published_as: nothing beside it


def test_the_bias_bench_study_names_a_published_value_for_every_method_and_axis():
    """studies/bias_bench.yaml: each method's published_as has Meade et al.'s CrowS-Pairs
    value on each of the study's axes (the variants read as their base axis)."""
    from cdsbias.axes import get_axis
    from cdsbias.benchmarks import get_benchmark

    spec = load_spec(REPO / "studies" / "bias_bench.yaml")
    published = get_benchmark("crows_pairs").published
    for method, keys in spec.methods.items():
        for label in spec.method_axes(method):
            axis = get_axis(spec.axis_reference(label))
            assert axis.word_lists == "bias-bench"
            assert any(
                v.method == keys["published_as"] and v.fitted_axis == axis.variant_of
                for v in published
            ), (method, label)


def test_the_table_is_the_same_every_time(tmp_path, fake_cells):
    out = tmp_path / "study"
    main(["study", "run", str(write_spec(tmp_path)), "--out", str(out), "--table"])
    first = (out / "table" / "table.json").read_bytes()
    main(["study", "table", str(out)])
    assert (out / "table" / "table.json").read_bytes() == first


def test_an_unknown_cluster_for_slurm_is_one_line(tmp_path, monkeypatch):
    from cdsbias.studies.executors import slurm_executor
    from cdsbias.studies.spec import SlurmSpec

    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch
    with pytest.raises(CdsbiasError, match="there is no Slurm here"):
        slurm_executor(tmp_path, SlurmSpec())


def test_slurm_through_submitit_debug_executor(tmp_path, fake_cells):
    """submitit's DebugExecutor runs the job array in this process: the Slurm path's
    parameters, map_array and the cell jobs' own state records; only sbatch is not run."""
    spec = load_spec(write_spec(tmp_path, methods={"cda": {}}, seeds=1))
    out = tmp_path / "study"
    counts = run_study(spec, out, executor="slurm", cluster="debug")
    assert counts["done"] == 2
    assert (out / "slurm").is_dir()
    assert (out / "runs" / "tiny" / "cda" / "gender" / "seed-0" / "trainer_state.json").exists()


def methods_page():
    """scripts/methods_page.py as a module."""
    import importlib.util

    script = REPO / "scripts" / "methods_page.py"
    spec = importlib.util.spec_from_file_location("methods_page", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_methods_page_writes_a_table_from_a_studys_cells(tmp_path, fake_cells):
    """``make methods``'s last step: each named method's seed-0 cell, through compare."""
    out = tmp_path / "study"
    spec_path = write_spec(tmp_path, methods={"cda": {}, "cds": {}})
    main(["study", "run", str(spec_path), "--out", str(out)])
    page = tmp_path / "page.md"
    page.write_text("head\n<!-- compare: begin -->\nold\n<!-- compare: end -->\ntail\n")
    module = methods_page()
    assert module.main(["--study", str(out), "cds", "cda", "--page", str(page)]) == 0
    text = page.read_text()
    assert "cdsbias compare cds cda --format markdown" in text and "old" not in text
    rows = [line for line in text.splitlines() if line.startswith("| cd")]
    assert [r.split(" | ")[0] for r in rows] == ["| cds", "| cda"]
    assert "+2.0000 → +0.5000" in rows[0]  # seed 0 of cds: 2.0 -> 0.5


def test_ranking_by_hand(tmp_path, fake_cells):
    from cdsbias.studies.ranking import PairOrder, rank_methods, ranking_text
    from cdsbias.studies.table import study_table

    out = tmp_path / "study"
    spec_path = write_spec(tmp_path, methods={"cda": {}, "cds": {}, "dropout": {}})
    main(["study", "run", str(spec_path), "--out", str(out)])
    _, rows, columns = study_table(out)
    column = next(c for c in columns if c.key == "becpro/mean_abs_gap")
    order, pairs = rank_methods(rows, column, "tiny", lambda r: r.method)
    # Means: cds 0.6 (0.5, 0.7), cda 1.05 (1.0, 1.1), dropout 1.9 (1.9, 1.9); base left out.
    assert order == ["cds", "cda", "dropout"]
    by_pair = {(p.better, p.worse): p for p in pairs}
    assert set(by_pair) == {("cds", "cda"), ("cds", "dropout"), ("cda", "dropout")}
    assert by_pair["cds", "cda"].difference == pytest.approx(0.45)
    assert all(p.seeds_agree == p.seeds == 2 for p in pairs)  # the same order in each seed
    # 0.45 against a bootstrap SD near 0.1 (see test_the_table_by_hand): told apart.
    assert all(p.told_apart for p in pairs) and ranking_text(order, pairs) == "cds < cda < dropout"
    near = [PairOrder("a", "b", 0.1, (-0.1, 0.3), 1, 2), PairOrder("b", "c", 1.0, (0.5, 1.5), 2, 2)]
    near.append(PairOrder("a", "c", 1.1, (0.6, 1.6), 2, 2))
    assert ranking_text(["a", "b", "c"], near) == "a ≈ b < c"


def test_methods_page_seeds_block(tmp_path, fake_cells):
    out = tmp_path / "study"
    main(["study", "run", str(write_spec(tmp_path, methods={"cda": {}, "cds": {}})), "--out",
          str(out)])  # fmt: skip
    page = tmp_path / "page.md"
    page.write_text("head\n<!-- seeds: begin -->\nold\n<!-- seeds: end -->\ntail\n")
    module = methods_page()
    argv = ["--study", str(out), "cds", "cda", "--page", str(page), "--block", "seeds", "--seeds"]
    assert module.main(argv) == 0
    text = page.read_text()
    assert text.startswith("head\n") and text.endswith("tail\n") and "\nold\n" not in text
    rows = {line.split(" | ")[0][2:]: line.split(" | ") for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| run")}  # fmt: skip
    assert list(rows) == ["base", "cds", "cda"]
    # cds: seed 0 0.5; seeds 0.5 and 0.7: mean 0.6, SD 0.1414; change against step 0 (2.0).
    assert rows["cds"][1:3] == ["2/2", "+0.5000"] and rows["cds"][3].startswith(
        "+0.6000 ± 0.1414 ["
    )
    assert rows["cds"][4].startswith("-1.4000 [")
    assert rows["base"][6] == "+3.0000"  # one seed, no test-example level: no interval
    assert "ranked by each headline metric of `becpro`" in text
    assert "  - mean |gap| (lower is better): cds < cda. Of 1 pairs, 1 in the same order" in text


def test_wandb_each_cell_in_the_studys_group_and_the_table_offline(tmp_path, fake_cells):
    """Cells get report_to wandb and the study's group (W&B reads WANDB_RUN_GROUP); the
    table is logged as a W&B Table in a run of that group, offline without a key."""
    out = tmp_path / "study"
    spec_path = write_spec(tmp_path, methods={"cda": {}}, seeds=1, wandb=True)
    assert expand(load_spec(spec_path))[1].keys["report_to"] == "wandb"
    assert main(["study", "run", str(spec_path), "--out", str(out), "--table"]) == 0
    cell = out / "runs" / "tiny" / "cda" / "gender" / "seed-0"
    assert (cell / "group.txt").read_text() == "demo"
    runs = list((out / "wandb").glob("offline-run-*"))
    assert len(runs) == 1 and list(runs[0].glob("*.wandb"))


def test_a_gpu_cell_on_slurm_is_launched_with_accelerate(tmp_path):
    from cdsbias.studies.executors import slurm_launch
    from cdsbias.studies.spec import SlurmSpec

    config = str(REPO / "recipes" / "accelerate" / "single_gpu.yaml")
    cell = expand(load_spec(write_spec(tmp_path, seeds=1)))[0]
    gpu = slurm_launch(SlurmSpec(gpus_per_cell=2, accelerate_config=config), {})
    command = gpu.command(cell, tmp_path)
    assert command[1:3] == ["-m", "accelerate.commands.launch"]
    assert command[3:9] == ["--config_file", config, "--num_processes", "2", "--num_machines", "1"]
    assert command[9:12] == ["-m", "cdsbias.studies.launch", "--base"]  # the base cell
    cpu = slurm_launch(SlurmSpec(cpus_per_cell=4), {})
    assert cpu.accelerate is None and cpu.threads == 4
    assert cpu.command(cell, tmp_path)[1:4] == ["-m", "cdsbias.studies.launch", "--base"]


def test_status_running_while_a_driver_holds_the_lock_else_interrupted(tmp_path):
    folder = StudyFolder(tmp_path / "study")
    cell = expand(load_spec(write_spec(tmp_path)))[1]
    folder.write_state(cell, "running", pid=1)
    with folder.lock():
        assert folder.status(cell).status == "running"
    status = folder.status(cell)
    assert status.status == "pending" and status.note.startswith("interrupted")
    folder.write_state(cell, "failed", error="boom")
    assert (folder.status(cell).status, folder.status(cell).note) == ("failed", "boom")
    folder.write_state(cell, "done")  # a done state without its run folder is not done
    assert folder.status(cell).status == "pending"
