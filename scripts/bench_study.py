"""Study speed: the driver's overhead per cell, ``study table`` over 200 cells, and
``--jobs 2`` against one cell at a time.

1. Driver overhead. A study of ``--cells`` cells whose process is a stand-in (a Python
   process that writes a finished run folder, as tests/test_studies.py's) runs through the
   driver (spec checks, lock, state records, the pool); the same processes run in a plain
   loop in this process as the baseline. Overhead per cell = (driver - loop) / cells, the
   recipe checks (one ``train.py`` recipe load per method and axis) shown apart. Goal < 1 s.
2. ``study table`` over 200 synthetic finished cells (10 methods x 2 axes x 10 seeds, three
   benchmarks of two headline metrics each, held-out loss); the floor beside it is reading
   every cell's points alone. Goal < 10 s.
3. ``--jobs 2`` vs ``--jobs 1`` wall time on real tiny cells (``--tiny-cells``; the smoke
   recipe's tiny BERT, 2 steps, BEC-Pro at steps 0 and 2), one thread per cell. The bound is
   min(jobs, cores) = 2 on an idle 2-core machine, less when other work holds the cores:
   the load average is printed beside it.
4. ``--methods-demo BASE`` (about 15 min on 2 cores): the methods demo study
   (studies/methods_demo.yaml on the demo's base model) run with ``--jobs 1`` (one cell at
   a time on every core) and ``--jobs 2`` (two cells, one thread each), into fresh folders.
   Goal >= 1.7x. Its bound is not 2: two threads make one cell faster, so sequential
   already uses both cores in part. The best ``--jobs 2`` can do is
   ``max(sum / 2, longest)`` of the cells' own one-thread times (each cell's ``seconds`` in
   the study's state), so the bound printed is ``--jobs 1`` wall time over that.

Usage:
    python scripts/bench_study.py                     # 1, 2 and 3
    python scripts/bench_study.py --skip-jobs         # 1 and 2 only (seconds)
    python scripts/bench_study.py --skip-jobs --methods-demo runs/demo/base   # 1, 2 and 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SMOKE = str(REPO / "recipes" / "smoke.yaml")
STAND_IN = """
import json, sys
from pathlib import Path
out = Path(sys.argv[1]); out.mkdir(parents=True)
point = {"step": 0, "benchmarks": {}, "heldout_loss": 2.0}
(out / "bias_metrics.jsonl").write_text(json.dumps(point) + "\\n")
(out / "trainer_state.json").write_text("{}")
"""


def spec(folder: Path, methods: dict, seeds: int, axes: list[str], model: str) -> Path:
    values = {
        "name": "bench", "recipe": SMOKE, "models": {"tiny": model}, "methods": methods,
        "seeds": seeds, "axes": axes,
        "overrides": {"init_from_scratch": False, "max_steps": 2, "save_steps": 2,
                      "max_documents": 40, "bias_n_resamples": 50},
    }  # fmt: skip
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


def driver_overhead(cells: int) -> None:
    from cdsbias.studies import job
    from cdsbias.studies.cells import check_cells, expand
    from cdsbias.studies.runner import run_study
    from cdsbias.studies.spec import load_spec

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        script = tmp / "stand_in.py"
        script.write_text(STAND_IN, encoding="utf-8")
        loaded = load_spec(spec(tmp, {"cds": {}}, cells - 1, ["gender"], str(tmp / "model")))
        check_cells(expand(loaded)[:1], tmp / "warm")  # imports (transformers, ...) once
        start = time.perf_counter()
        check_cells(expand(loaded), tmp / "checked")
        checks = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(cells):
            subprocess.run([sys.executable, str(script), str(tmp / "loop" / str(i))], check=True)
        loop = time.perf_counter() - start

        def command(self, cell, study):
            return [sys.executable, str(script), str(cell.folder(study))]

        job.Launch.command = command  # the stand-in instead of train.py
        start = time.perf_counter()
        run_study(loaded, tmp / "study", jobs=1)
        driven = time.perf_counter() - start
    per_cell = (driven - checks - loop) / cells
    load = os.getloadavg()[0]
    overhead = (driven - loop) / cells
    print(
        f"1. driver (load {load:.1f}): {cells} cells in {driven:.2f} s; the same processes "
        f"in a loop {loop:.2f} s; recipe checks {checks:.2f} s (2 recipes); overhead "
        f"{per_cell:.3f} s per cell besides the checks, {overhead:.3f} s with them: "
        f"goal < 1 s: {'met' if overhead < 1 else 'not met'}"
    )


def synthetic_study(folder: Path) -> None:
    """200 finished cells with three benchmarks of two headline metrics and a loss."""
    from cdsbias.benchmarks.axis_scope import axis_key
    from cdsbias.studies.cells import expand
    from cdsbias.studies.spec import load_spec
    from cdsbias.studies.state import DONE, StudyFolder

    methods = {f"m{i}": {"learning_rate": 1e-4 * (i + 1)} for i in range(10)}
    loaded = load_spec(spec(folder, methods, 10, ["gender", "race"], str(folder / "model")))
    loaded.base = False
    study = StudyFolder(folder / "study")
    study.write_spec({**loaded.to_dict(), "spec_file": loaded.source})
    metric = [{"key": f"k{j}", "label": f"metric {j}", "unit": "%", "better": "closer",
               "ideal": 50.0} for j in range(2)]  # fmt: skip
    for n, cell in enumerate(expand(loaded)):
        out = cell.folder(study.path)
        out.mkdir(parents=True)
        points = []
        for step, shift in ((0, 10.0), (100, 5.0 + (n % 7) * 0.3)):
            benchmarks = {
                axis_key(f"bench{b}", cell.axis): {
                    "metrics": {"k0": 50 + shift, "k1": 50 - shift},
                    "headline": metric,
                    "intervals": {"k0": [48 + shift, 52 + shift], "k1": [48 - shift, 52 - shift]},
                }
                for b in range(3)
            }
            points.append({"step": step, "benchmarks": benchmarks, "heldout_loss": 2 + step / 1e3})
        (out / "bias_metrics.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
        (out / "trainer_state.json").write_text("{}")
        study.write_state(cell, DONE, spec_hash=cell.spec_hash(), record=cell.record())


def table_time() -> None:
    from cdsbias.runs.folder import RunFolder
    from cdsbias.studies.outputs import write_table
    from cdsbias.studies.table import load_study, study_table

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        synthetic_study(tmp)
        start = time.perf_counter()
        _, _, cells = load_study(tmp / "study")
        for cell in cells:
            RunFolder(cell.folder(tmp / "study")).points()
        floor = time.perf_counter() - start
        start = time.perf_counter()
        spec_, rows, columns = study_table(tmp / "study")
        write_table(spec_, rows, columns, tmp / "study")
        seconds = time.perf_counter() - start
    print(
        f"2. study table (load {os.getloadavg()[0]:.1f}): {len(cells)} cells, {len(rows)} rows "
        f"x {len(columns)} columns in {seconds:.2f} s (reading the cells' points alone: "
        f"{floor:.2f} s, {seconds / floor:.1f}x that floor): goal < 10 s: "
        f"{'met' if seconds < 10 else 'not met'}"
    )


def jobs_1_and_2(
    spec_file: Path | str, arguments: list[str], folder: Path, env: dict[str, str]
) -> tuple[dict[int, tuple[float, float]], dict[int, list[float]]]:
    """``study run SPEC ARGUMENTS`` with ``--jobs 1``, then ``--jobs 2``, each into a fresh
    ``folder/jobs-N``: per job count, (wall seconds, load average at the start) and the
    cells' own recorded ``seconds``."""
    walls, seconds = {}, {}
    for jobs in (1, 2):
        study = folder / f"jobs-{jobs}"
        command = [sys.executable, "-m", "cdsbias", "study", "run", str(spec_file), *arguments,
                   "--out", str(study), "--jobs", str(jobs)]  # fmt: skip
        load = os.getloadavg()[0]
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True, cwd=REPO)
        walls[jobs] = (time.perf_counter() - start, load)
        states = (study / "state").rglob("*.json")
        seconds[jobs] = [json.loads(path.read_text())["seconds"] for path in states]
    return walls, seconds


def jobs_speedup(cells: int) -> None:
    from _models import tiny_masked_lm

    from cdsbias.studies.executors import cores

    data = REPO.parent / "shared" / "data"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = tiny_masked_lm("bert", tmp / "model")
        path = spec(tmp, {"cds": {}}, cells, ["gender"], str(model))
        extra = [f"data_dir={data}", f"bias_data_dir={data}", "--set", "base=false"]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        walls, _ = jobs_1_and_2(path, extra, tmp, env)
    ratio = walls[1][0] / walls[2][0]
    bound = min(2, cores())
    print(f"3. --jobs: {cells} tiny cells, one thread each: --jobs 1 {walls[1][0]:.1f} s "
          f"(load {walls[1][1]:.1f}), --jobs 2 {walls[2][0]:.1f} s (load {walls[2][1]:.1f}): "
          f"{ratio:.2f}x; bound min(jobs, cores) = {bound}x on an idle machine with "
          f"{cores()} cores; goal >= 1.7x (on the methods demo): "
          f"{'met' if ratio >= 1.7 else 'not met'} here, under the load shown")  # fmt: skip


def methods_demo(base: str, out: Path | None) -> None:
    from cdsbias.studies.executors import cores

    data = REPO.parent / "shared" / "data"
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}  # the driver splits
    arguments = [f"bias_data_dir={data}", "--model", f"demo={base}"]
    with tempfile.TemporaryDirectory() as tmp:
        spec_file = REPO / "studies" / "methods_demo.yaml"
        walls, seconds = jobs_1_and_2(spec_file, arguments, out or Path(tmp), env)
    one_thread = seconds[2]
    best = max(sum(one_thread) / 2, max(one_thread))
    ratio, bound = walls[1][0] / walls[2][0], walls[1][0] / best
    print(
        f"4. methods demo study, {len(one_thread)} cells on {cores()} cores: --jobs 1 "
        f"{walls[1][0]:.0f} s (load {walls[1][1]:.1f}; cells sum {sum(seconds[1]):.0f} s), "
        f"--jobs 2 {walls[2][0]:.0f} s (load {walls[2][1]:.1f}; cells sum "
        f"{sum(one_thread):.0f} s at one thread, longest {max(one_thread):.0f} s): "
        f"{ratio:.2f}x; bound {bound:.2f}x (perfect packing of those one-thread cells, "
        f"{best:.0f} s); goal >= 1.7x: {'met' if ratio >= 1.7 else 'not met'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=20, help="stand-in cells for 1")
    parser.add_argument("--tiny-cells", type=int, default=4, help="real tiny cells for 3")
    parser.add_argument("--skip-jobs", action="store_true", help="skip 3 (minutes)")
    parser.add_argument("--methods-demo", metavar="BASE", help="run 4 on this base model")
    parser.add_argument("--out", type=Path, help="keep 4's two studies here (default: temp)")
    args = parser.parse_args()
    driver_overhead(args.cells)
    table_time()
    if not args.skip_jobs:
        jobs_speedup(args.tiny_cells)
    if args.methods_demo:
        methods_demo(str(Path(args.methods_demo).resolve()), args.out)


if __name__ == "__main__":
    main()
