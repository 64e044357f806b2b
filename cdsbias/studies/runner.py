"""The driver of ``cdsbias study run``: check everything, take the lock, run what is left.

Order: the spec and every cell's recipe are checked (one ``error:`` line, nothing written);
the study's lock is taken (a second driver is refused); each finished cell's recorded
hash is compared with the spec's (a changed cell is refused with the key that changed,
unless ``rerun_changed``); then only unfinished and failed cells run, the longest expected
first (:func:`longest_first`). A finished cell's folder is never opened for writing.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from cdsbias.errors import CdsbiasError
from cdsbias.studies.cells import Cell, changed_key, check_cells, expand
from cdsbias.studies.spec import StudySpec
from cdsbias.studies.state import DONE, FAILED, StudyFolder


def default_folder(spec: StudySpec) -> Path:
    """``runs/studies/<name>``: where a study goes without ``--out``."""
    return Path("runs") / "studies" / spec.name


def cells_to_run(folder: StudyFolder, cells: Sequence[Cell], *, rerun_changed: bool) -> list[Cell]:
    """The cells that are not finished, plus (with ``rerun_changed``) finished cells whose
    keys changed since they ran.

    Raises:
        CdsbiasError: A finished cell's keys changed and ``rerun_changed`` is false (the
            message names the cell and the key).
    """
    todo = []
    for cell in cells:
        status = folder.status(cell)
        if status.status != DONE:
            todo.append(cell)
            continue
        recorded = (status.state or {}).get("spec_hash")
        if recorded == cell.spec_hash():
            continue
        if not rerun_changed:
            key = changed_key((status.state or {}).get("record") or {}, cell.record())
            raise CdsbiasError(
                f"cell {cell.id} finished with other keys than the spec now gives ({key}); "
                "restore the spec, run the changed study into a new --out folder, or pass "
                "--rerun-changed to run the changed cells again (their folders are replaced)."
            )
        todo.append(cell)
    return todo


def trains(cell: Cell) -> bool:
    """Whether a cell trains (not the base model, not a post-hoc-only run)."""
    if cell.is_base:
        return False
    record = cell.record()
    return not {**record["recipe"], **record["keys"]}.get("posthoc_only", False)


def longest_first(folder: StudyFolder, todo: Sequence[Cell], cells: Sequence[Cell]) -> list[Cell]:
    """``todo`` in the order a pool should start them: the longest expected first.

    Starting the longest jobs first (Graham's LPT rule) keeps a pool of N workers from
    ending on one long cell while the others idle. A cell's expected time is the mean
    ``seconds`` of the study's finished cells of the same model and method (another seed or
    axis); a cell with none is taken as longer than any measured one when it trains and
    shorter when it only scores (the base model, post-hoc-only methods). Ties keep the
    spec's order.

    Args:
        folder: The study folder (its finished cells' recorded times).
        todo: The cells to run.
        cells: Every cell of the spec (the ones whose times are read).
    """
    measured: dict[tuple[str, str], list[float]] = {}
    for cell in cells:
        status = folder.status(cell)
        seconds = (status.state or {}).get("seconds")
        if status.status == DONE and isinstance(seconds, (int, float)):
            measured.setdefault((cell.model, cell.method), []).append(float(seconds))

    def expected(cell: Cell) -> float:
        times = measured.get((cell.model, cell.method))
        if times:
            return sum(times) / len(times)
        return float("inf") if trains(cell) else 0.0

    order = sorted(range(len(todo)), key=lambda i: (-expected(todo[i]), i))
    return [todo[i] for i in order]


def run_study(
    spec: StudySpec,
    out: Path | None = None,
    *,
    executor: str = "local",
    jobs: int = 1,
    rerun_changed: bool = False,
    cluster: str | None = None,
) -> dict[str, int]:
    """Runs the study's unfinished cells; returns the count of cells per status.

    Args:
        spec: The study.
        out: The study folder (default: :func:`default_folder`).
        executor: ``local`` or ``slurm``.
        jobs: Cells at once (local).
        rerun_changed: Run finished cells whose keys changed again instead of refusing.
        cluster: submitit's cluster for ``slurm`` (``local``/``debug`` in tests).

    Raises:
        CdsbiasError: A spec error, a held lock, a changed finished cell.
    """
    from cdsbias.studies.executors import run_local, run_slurm

    if jobs < 1:
        raise CdsbiasError(f"--jobs must be at least 1, got {jobs}.")
    folder = StudyFolder(out or default_folder(spec))
    cells = expand(spec)
    for method in spec.methods:
        if not spec.method_axes(method):
            print(f"method {method}: no cells (its axes {spec.methods[method]['axes']} are "
                  f"not the study's {list(spec.axes)})", file=sys.stderr)  # fmt: skip
    check_cells(cells, folder.path)
    with folder.lock():
        todo = cells_to_run(folder, cells, rerun_changed=rerun_changed)
        todo = longest_first(folder, todo, cells)
        folder.write_spec({**spec.to_dict(), "spec_file": spec.source})
        for cell in todo:  # a changed finished cell is rerun from nothing
            if folder.status(cell).status == DONE:
                shutil.rmtree(cell.folder(folder.path))
        done = len(cells) - len(todo)
        print(
            f"study {spec.name}: {len(cells)} cells, {done} finished, {len(todo)} to run "
            f"({executor}{f', {jobs} at a time' if executor == 'local' else ''}) in {folder.path}",
            file=sys.stderr,
        )
        env = {"WANDB_RUN_GROUP": spec.name} if spec.wandb else {}
        started = time.time()

        def report(cell: Cell, status: str) -> None:
            line = f"  {status:<6} {cell.id}"
            if status == FAILED:
                line += f": {folder.status(cell).note}"
            print(line, file=sys.stderr, flush=True)

        if todo and executor == "slurm":
            run_slurm(folder.path, todo, slurm=spec.slurm, env=env, report=report, cluster=cluster)
        elif todo:
            run_local(folder.path, todo, jobs=jobs, env=env, report=report)
        counts = {DONE: 0, FAILED: 0}
        for cell in cells:
            status = folder.status(cell).status
            counts[status] = counts.get(status, 0) + 1
        print(
            f"study {spec.name}: {counts[DONE]} done, {counts[FAILED]} failed of "
            f"{len(cells)} in {time.time() - started:.0f} s",
            file=sys.stderr,
        )
    return counts
