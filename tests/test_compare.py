"""``cdsbias compare``: two real smoke runs side by side, and hand-made run folders whose
reductions are known in advance."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from cdsbias.cli import main
from cdsbias.runs.compare import compare
from cdsbias.runs.points import before_after, read_points
from cdsbias.runs.summaries import read_runs

SMOKE = REPO / "recipes" / "smoke.yaml"
# The smallest training that still evaluates twice (step 0 and step 2) with a held-out loss.
QUICK = ["max_steps=2", "save_steps=2", "max_documents=40", "bias_n_resamples=50"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# ------------------------------------------------------------------ two real smoke runs
@pytest.fixture(scope="module")
def runs(tmp_path_factory, shared_data) -> list[Path]:
    """A CDS run and a run on the original text, same seed and steps."""
    from cdsbias.train.config import load_recipe
    from cdsbias.train.run import run

    root = tmp_path_factory.mktemp("compare")
    folders = []
    for name, mode in (("cds", "cds"), ("original", "none")):
        overrides = [f"output_dir={root / name}", f"data_dir={shared_data}",
                     f"bias_data_dir={shared_data}", f"cds_mode={mode}", *QUICK]  # fmt: skip
        folders.append(run(load_recipe(SMOKE, overrides)))
    return folders


@pytest.fixture(scope="module")
def compared(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out") / "comparison"
    assert main(["compare", *map(str, runs), "--out", str(out)]) == 0
    return out


def test_compare_writes_the_table_and_the_png(compared):
    from matplotlib.image import imread

    assert sorted(p.name for p in compared.iterdir()) == [
        "comparison.csv", "comparison.md", "tradeoff.png"]  # fmt: skip
    png = compared / "tradeoff.png"
    assert png.read_bytes()[:8] == PNG_MAGIC
    image = imread(png)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 400
    table = (compared / "comparison.md").read_text(encoding="utf-8")
    header, rule, *rows = table.split("\n\n")[0].splitlines()
    assert header.startswith("| run | method | trainable parameters | wall time |")
    assert header.count(" | ") + 1 == rule.count("---")  # "\|" inside labels is escaped
    assert [r.split(" | ")[0] for r in rows] == ["| cds", "| original"]


def test_csv_holds_each_runs_own_before_after_numbers(runs, compared):
    from transformers import AutoModelForMaskedLM

    rows = read_csv(compared / "comparison.csv")
    assert [r["run"] for r in rows] == ["cds", "original"]
    assert rows[0]["method"].endswith(" · CDS p=1.0")
    assert rows[1]["method"].endswith(" · original text")
    for folder, row in zip(runs, rows):
        summary = before_after(read_points(folder))
        assert (int(row["first_step"]), int(row["last_step"])) == (0, 2)
        checked = 0
        for name, entries in summary["benchmarks"].items():
            for metric, before, after in entries:
                column = f"{name}/{metric.key}"
                assert float(row[f"{column}/before"]) == before
                assert float(row[f"{column}/after"]) == after
                reduction = float(row[f"{column}/reduction_pct"])
                # The same change, in the words `cdsbias report` uses for it.
                worded = metric.change(before, after)
                assert f"{abs(reduction):.1f}%" in worded
                assert ("(better)" in worded) == (reduction > 0)
                checked += 1
        assert checked >= 1
        heldout_before, heldout_after = summary["heldout_loss"]
        assert float(row["heldout_loss_before"]) == heldout_before
        assert float(row["heldout_loss_after"]) == heldout_after
        assert float(row["heldout_loss_increase_pct"]) == pytest.approx(
            100 * summary["heldout_loss_change"]
        )
        method = json.loads((folder / "run_info.json").read_text()).get("method")
        if method:
            assert int(row["trainable_parameters"]) == method["trainable_parameters"]
            assert row["parameters_source"] == "run_info"
        else:
            model = AutoModelForMaskedLM.from_pretrained(folder)
            assert int(row["trainable_parameters"]) == model.num_parameters()
            assert row["parameters_source"] == "weights"
        assert float(row["wall_time_s"]) > 0


def test_stdout_is_the_markdown_table(runs, compared, capsys):
    assert main(["compare", *map(str, runs)]) == 0
    printed = capsys.readouterr().out
    written = (compared / "comparison.md").read_text(encoding="utf-8")
    # Without --out there is no plot, so only the note about it differs.
    assert printed.split("\n\n")[0] == written.split("\n\n")[0]
    assert "tradeoff.png" not in printed


def test_metric_option_chooses_the_plotted_metric(runs, tmp_path, capsys):
    name, entry = next(iter(read_points(runs[0])[-1]["benchmarks"].items()))
    last = f"{name}/{entry['headline'][-1]['key']}"
    assert main(["compare", *map(str, runs), "--out", str(tmp_path), "--metric", last]) == 0
    assert f"plots the reduction of {last} " in (tmp_path / "comparison.md").read_text()
    assert main(["compare", *map(str, runs), "--metric", f"{name}/no_such_key"]) == 2
    err = capsys.readouterr().err
    assert f"error: --metric {name}/no_such_key: no run has that headline metric" in err
    assert last in err


def test_a_folder_that_is_not_a_run_is_named(runs, tmp_path, capsys):
    assert main(["compare", str(runs[0]), str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {tmp_path} is not a cdsbias run: it has no bias_metrics.jsonl; "
                   "pass a train.py output_dir (not a checkpoint-N folder).")  # fmt: skip
    assert not (tmp_path / "o").exists()
    assert main(["compare", str(runs[0] / "checkpoint-2")]) == 2
    assert "checkpoint-2 is not a cdsbias run" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing")]) == 2
    assert "missing is not a folder" in capsys.readouterr().err
    assert main(["compare", str(runs[0]), str(runs[0])]) == 2
    assert "is given twice" in capsys.readouterr().err


# ------------------------------------------------------------------ hand-made run folders
HEADLINE = [
    {"key": "gap", "label": "mean gap", "unit": "nats", "better": "lower", "ideal": 0.0},
    {"key": "acc", "label": "accuracy", "unit": "proportion", "better": "higher", "ideal": 1.0},
    {"key": "ss", "label": "stereotype score", "unit": "%", "better": "closer", "ideal": 50.0},
    {"key": "effect", "label": "effect", "unit": "d", "better": "closer", "ideal": 0.0},
    {"key": "zero", "label": "starts at 0", "unit": "nats", "better": "lower", "ideal": 0.0},
]


def make_run(folder: Path, benchmarks: dict, heldout=(2.0, 2.1), recipe=None, info=None):
    """A run folder as train.py leaves it: two points, recipe.yaml, run_info.json."""
    folder.mkdir(parents=True)
    points = []
    for index, step in enumerate((0, 10)):
        point = {"step": step, "epoch": 0.0, "benchmarks": {
            name: {"headline": headline, "metrics": values[index]}
            for name, (headline, values) in benchmarks.items()}}  # fmt: skip
        if heldout is not None:
            point["heldout_loss"] = heldout[index]
        points.append(json.dumps(point))
    (folder / "bias_metrics.jsonl").write_text("\n".join(points) + "\n")
    (folder / "recipe.yaml").write_text(
        yaml.safe_dump(recipe or {"cds_mode": "cds", "cds_probability": 1.0})
    )
    (folder / "run_info.json").write_text(json.dumps(info or {"base_model": None}))
    return folder


def test_reduction_follows_each_metrics_direction(tmp_path):
    before = {"gap": 2.0, "acc": 0.6, "ss": 60.0, "effect": -0.4, "zero": 0.0}
    after = {"gap": 0.5, "acc": 0.75, "ss": 52.0, "effect": 0.1, "zero": 0.3}
    lora = {"peft_method": "lora", "label": "LoRA r=8 (query, value)",
            "trainable_parameters": 294_912, "total_parameters": 110_000_000,
            "trainable_share": 294_912 / 110_000_000, "dropout": None}  # fmt: skip
    folder = make_run(tmp_path / "lora", {"bench_a": (HEADLINE, [before, after])},
                      recipe={"cds_mode": "cds", "cds_probability": 0.5},
                      info={"method": lora})  # fmt: skip
    (folder / "trainer_state.json").write_text(
        json.dumps({"log_history": [{"loss": 1.0, "step": 10}, {"train_runtime": 12.5}]})
    )
    worse = make_run(tmp_path / "worse", {"bench_a": (HEADLINE, [after, before])},
                     heldout=(2.0, 1.9), recipe={"cds_mode": "none"})  # fmt: skip
    out = tmp_path / "out"
    table = compare([folder, worse], out=out)
    lora_row, worse_row = read_csv(out / "comparison.csv")
    expected = {
        "gap": 75.0,  # lower is better: (2.0 - 0.5) / 2.0
        "acc": 25.0,  # higher is better: (0.75 - 0.6) / 0.6
        "ss": 80.0,  # distance to 50 falls from 10 to 2
        "effect": 75.0,  # distance to 0 falls from 0.4 to 0.1, across the sign
    }
    for key, value in expected.items():
        assert float(lora_row[f"bench_a/{key}/reduction_pct"]) == pytest.approx(value)
    assert lora_row["bench_a/zero/reduction_pct"] == ""  # no relative change from 0
    assert float(worse_row["bench_a/gap/reduction_pct"]) == pytest.approx(-300.0)
    assert float(worse_row["bench_a/acc/reduction_pct"]) == pytest.approx(-20.0)
    assert float(worse_row["bench_a/ss/reduction_pct"]) == pytest.approx(-400.0)
    assert float(lora_row["heldout_loss_increase_pct"]) == pytest.approx(5.0)
    assert float(worse_row["heldout_loss_increase_pct"]) == pytest.approx(-5.0)
    assert lora_row["method"] == "LoRA r=8 (query, value) · CDS p=0.5"
    assert (lora_row["methods"], lora_row["trainable_parameters"]) == ("lora", "294912")
    assert (lora_row["wall_time_s"], lora_row["wall_time_source"]) == ("12.5", "trainer_state")
    assert worse_row["method"] == "full fine-tuning · original text"
    assert worse_row["parameters_source"] == "unknown"  # no run_info method, no weights
    lora_line = next(line for line in table.splitlines() if line.startswith("| lora |"))
    assert "| 294,912 (0.268%) | 12 s |" in lora_line
    assert "+2.0000 → +0.5000 (75.0% better)" in lora_line
    assert "+0.6000 → +0.7500 (25.0% better)" in lora_line
    assert "2.0000 → 2.1000 (+5.0%)" in lora_line
    assert "(300.0% worse)" in next(line for line in table.splitlines() if "| worse |" in line)
    assert (out / "tradeoff.png").read_bytes()[:8] == PNG_MAGIC


def test_older_runs_count_parameters_from_the_weights_header(tmp_path):
    import numpy as np
    from safetensors.numpy import save_file

    metrics = [{"gap": 1.0}, {"gap": 0.5}]
    old = make_run(tmp_path / "old", {"bench_a": (HEADLINE[:1], metrics)})
    save_file({"a": np.zeros((3, 4), np.float32), "b": np.zeros(5, np.float16)},
              str(old / "model.safetensors"))  # fmt: skip
    # A checkpoint only (the run was stopped before its final save) is read as well.
    stopped = make_run(tmp_path / "stopped", {"bench_a": (HEADLINE[:1], metrics)})
    (stopped / "checkpoint-10").mkdir()
    save_file(
        {"a": np.zeros((2, 2), np.float32)}, str(stopped / "checkpoint-10" / "model.safetensors")
    )
    start = 1_700_000_000
    os.utime(old / "recipe.yaml", (start, start))
    os.utime(old / "bias_metrics.jsonl", (start + 125, start + 125))
    old_run, stopped_run = read_runs([old, stopped])
    assert (old_run.trainable_parameters, old_run.parameters_source) == (17, "weights")
    assert stopped_run.trainable_parameters == 4
    assert (old_run.wall_time, old_run.wall_time_source) == (125, "file times")
    table = compare([old, stopped])
    assert "| old | full fine-tuning · CDS p=1.0 | 17 (100%) | ≈ 2 min 05 s |" in table
    assert "every parameter of their saved weights: all of them count as trainable" in table
    assert "≈ wall time from file times" in table


def test_different_benchmarks_give_the_union_with_blanks(tmp_path):
    first = make_run(
        tmp_path / "a" / "run", {"bench_a": (HEADLINE[:1], [{"gap": 1.0}, {"gap": 0.5}])}
    )
    second = make_run(
        tmp_path / "b" / "run",
        {"bench_b": (HEADLINE[1:2], [{"acc": 0.5}, {"acc": 0.6}])},
        heldout=None,
        recipe={"cds_mode": "cda", "resume_from_checkpoint": True},
    )
    out = tmp_path / "out"
    with pytest.warns(UserWarning, match=r"tradeoff.png leaves out b/run: no bench_a/gap"):
        table = compare([first, second], out=out)
    rows = read_csv(out / "comparison.csv")
    # Two runs called "run": their labels are the folder paths that tell them apart.
    assert [r["run"] for r in rows] == ["a/run", "b/run"]
    assert rows[0]["bench_b/acc/before"] == "" and rows[1]["bench_a/gap/before"] == ""
    assert float(rows[1]["bench_b/acc/reduction_pct"]) == pytest.approx(20.0)
    assert rows[1]["heldout_loss_increase_pct"] == "" and rows[1]["resumed"] == "True"
    assert rows[1]["method"] == "full fine-tuning · CDA"
    assert "blank cells are metrics a run did not record (a/run lacks bench_b/acc; " \
        "b/run lacks bench_a/gap)" in table  # fmt: skip
    assert "† resumed run" in table
    row = "| b/run | full fine-tuning · CDA | n/a | n/a † |  | +0.5000 → +0.6000 (20.0% better) |"
    assert row + " n/a |" in table


def test_unreadable_run_files_are_named(tmp_path, capsys):
    folder = make_run(tmp_path / "run", {"bench_a": (HEADLINE[:1], [{"gap": 1.0}, {"gap": 0.5}])})
    (folder / "run_info.json").write_text('{"method": ')
    assert main(["compare", str(folder)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {folder / 'run_info.json'} cannot be read (")
    (folder / "bias_metrics.jsonl").write_text('{"step": 0\n')
    assert main(["compare", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {folder / 'bias_metrics.jsonl'} is not valid run output: ")
    assert err.count("\n") == 1


def test_listing_commands_stays_light():
    """``cdsbias --help`` must not pay for torch, transformers, matplotlib or pandas."""
    heavy = "{'torch', 'transformers', 'matplotlib', 'pandas'}"
    code = "import sys, cdsbias.cli; cdsbias.cli.build_parser(); "
    code += f"print(sorted({heavy} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_unreadable_weights_header_counts_as_unknown_with_a_warning(tmp_path):
    from cdsbias.runs.summaries import count_saved_parameters

    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.warns(UserWarning, match="cannot read the weights header"):
        assert count_saved_parameters(tmp_path) is None


def test_python_dash_m_runs_the_command(tmp_path):
    """``python -m cdsbias`` is the ``cdsbias`` script: same parser, same exit codes."""
    listed = subprocess.run(
        [sys.executable, "-m", "cdsbias", "methods"], capture_output=True, text=True
    )
    assert listed.returncode == 0 and "lora" in listed.stdout
    missing = tmp_path / "no-run"
    failed = subprocess.run(
        [sys.executable, "-m", "cdsbias", "report", str(missing)], capture_output=True, text=True
    )
    assert failed.returncode == 2
    assert failed.stderr.startswith("error: ") and failed.stderr.count("\n") == 1
