"""One cell, run where an executor puts it: a local worker thread or a Slurm job.

:func:`run_cell` records the cell as running, runs ``train.py`` (through
:mod:`cdsbias.studies.launch`) as a child process with the cell's output to its log, and
records the result: ``done`` with the spec hash it ran with, or ``failed`` with the run's
one-line error. Each cell is its own process, so a failing cell (or a crash) never takes
the others down, and the thread count each one gets is set before torch starts.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdsbias.studies.cells import Cell, record_hash
from cdsbias.studies.state import DONE, FAILED, RUNNING, StudyFolder

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """Linux: the cell gets SIGKILL when the process that started it dies, so a driver
    killed mid-study leaves no orphaned training behind to race its rerun."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass(frozen=True)
class Launch:
    """How a cell's process is started.

    Attributes:
        threads: ``OMP_NUM_THREADS`` of the cell (None: the environment's).
        accelerate: ``accelerate launch`` arguments (e.g. ``["--num_processes", "4"]``), or
            None to run the cell with this Python (one process, as ``python train.py``).
        env: Extra environment (W&B group and run name).
    """

    threads: int | None = None
    accelerate: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)

    def command(self, cell: Cell, study: Path) -> list[str]:
        entry = ["-m", "cdsbias.studies.launch", *(["--base"] if cell.is_base else [])]
        if self.accelerate is None:
            return [sys.executable, *entry, *cell.arguments(study)]
        accelerate = [sys.executable, "-m", "accelerate.commands.launch", *self.accelerate]
        return [*accelerate, *entry, *cell.arguments(study)]


def error_line(log: Path) -> str:
    """The run's one-line error: its last ``error: ...`` line, else the last line it printed
    (a traceback's exception), else the exit status."""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    except OSError:
        return "the cell printed nothing"
    lines = [line for line in lines if line]
    errors = [line for line in lines if line.startswith("error:")]
    if errors:
        return errors[-1][len("error:") :].strip()
    return lines[-1] if lines else "the cell printed nothing"


def run_cell(study: str | Path, cell: Cell, launch: Launch) -> str:
    """Runs one cell and records its state; returns ``done`` or ``failed``.

    An earlier, unfinished attempt's folder is removed first (the driver never passes a
    finished cell unless told to rerun it, and then has set it aside itself).
    """
    import shutil

    from cdsbias.runs.folder import TRAINER_STATE_FILE

    folder = StudyFolder(study)
    out = cell.folder(folder.path)
    if out.exists():
        shutil.rmtree(out)
    record = cell.record()
    spec_hash = record_hash(record)
    where: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname()}
    slurm_id = os.environ.get("SLURM_JOB_ID")
    if slurm_id:
        where.update(slurm_job_id=slurm_id, slurm_folder=os.environ.get("CDSBIAS_STUDY_SLURM"))
    started = time.time()
    folder.write_state(cell, RUNNING, started=started, **where)
    log = folder.log_file(cell)
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **launch.env}
    if launch.threads is not None:
        env["OMP_NUM_THREADS"] = str(launch.threads)
    env.setdefault("WANDB_NAME", cell.id)
    with open(log, "w", encoding="utf-8") as handle:
        process = subprocess.Popen(
            launch.command(cell, folder.path),
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=_die_with_parent,
        )
        folder.write_state(cell, RUNNING, started=started, cell_pid=process.pid, **where)
        code = process.wait()
    seconds = round(time.time() - started, 1)
    if code == 0 and (out / TRAINER_STATE_FILE).exists():
        folder.write_state(cell, DONE, spec_hash=spec_hash, record=record, seconds=seconds, **where)
        return DONE
    error = error_line(log)
    folder.write_state(
        cell,
        FAILED,
        error=error,
        exit_code=code,
        spec_hash=spec_hash,
        record=record,
        seconds=seconds,
        log=str(log),
        **where,
    )
    return FAILED
