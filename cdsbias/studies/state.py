"""A study folder: the driver's lock and each cell's state.

``STUDY/`` holds ``study.yaml`` (the spec as run), ``study.lock`` (held by the running
driver), ``state/<cell>.json`` (each cell's status, the hash and keys it ran with, the error
line of a failure), ``logs/<cell>.log`` (what the cell printed) and ``runs/<cell>/`` (the
run folders). A cell's state is written atomically by the process that runs it, so a
driver killed at any moment leaves every cell either finished, failed, or unfinished.

The lock is ``fcntl.flock`` on ``study.lock``: the kernel releases it when the driver dies
(SIGKILL included), so a stale lock never blocks a rerun, and a second driver on the same
folder is refused while the first lives.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cdsbias.errors import CdsbiasError
from cdsbias.io import atomic_write_text
from cdsbias.studies.cells import Cell

LOCK_FILE = "study.lock"
SPEC_FILE = "study.yaml"
STATE_DIR = "state"
LOG_DIR = "logs"
#: The statuses ``study status`` shows.
DONE, RUNNING, FAILED, PENDING = "done", "running", "failed", "pending"


@dataclass(frozen=True)
class CellStatus:
    """Where one cell stands."""

    cell: Cell
    status: str
    #: The failure's one-line error, or why a cell is pending again ("interrupted").
    note: str = ""
    state: dict[str, Any] | None = None


class StudyFolder:
    """A study's output folder.

    Args:
        path: The folder (``STUDY``).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    # ------------------------------------------------------------------ the lock
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Holds the study's lock for the block.

        Raises:
            CdsbiasError: Another driver holds it (the message names its process).
        """
        self.path.mkdir(parents=True, exist_ok=True)
        handle = open(self.path / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise CdsbiasError(
                    f"{self.path} is being run by another `cdsbias study run` ({holder}); wait "
                    "for it to finish (`cdsbias study status` shows its progress)."
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
            handle.flush()
            yield
        finally:
            handle.close()  # releases the lock

    def locked(self) -> bool:
        """Whether a driver holds the lock now."""
        path = self.path / LOCK_FILE
        if not path.exists():
            return False
        with open(path, encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
        return False

    # ------------------------------------------------------------------ the spec
    def write_spec(self, values: dict[str, Any]) -> None:
        atomic_write_text(self.path / SPEC_FILE, yaml.safe_dump(values, sort_keys=False))

    def spec_values(self) -> dict[str, Any]:
        """``study.yaml`` as written by the last ``study run``.

        Raises:
            CdsbiasError: The folder holds no study.
        """
        path = self.path / SPEC_FILE
        if not path.is_file():
            raise CdsbiasError(
                f"{self.path} is not a study folder (no {SPEC_FILE}); run `cdsbias study run "
                "SPEC --out FOLDER` first."
            )
        return yaml.safe_load(path.read_text(encoding="utf-8"))

    # ------------------------------------------------------------------ cell states
    def state_file(self, cell: Cell) -> Path:
        return self.path / STATE_DIR / f"{cell.id}.json"

    def log_file(self, cell: Cell) -> Path:
        return self.path / LOG_DIR / f"{cell.id}.log"

    def read_state(self, cell: Cell) -> dict[str, Any] | None:
        path = self.state_file(cell)
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return None  # a hand-damaged state: the cell counts as unfinished

    def write_state(self, cell: Cell, status: str, **values: Any) -> None:
        record = {"cell": cell.id, "status": status, "time": time.time(), **values}
        atomic_write_text(self.state_file(cell), json.dumps(record, indent=2, default=str) + "\n")

    def status(self, cell: Cell) -> CellStatus:
        """``done`` (finished, its run folder complete), ``failed`` (with its error line),
        ``running`` (a live driver or Slurm job runs it) or ``pending`` (never started, or
        interrupted: its driver died)."""
        from cdsbias.runs.folder import TRAINER_STATE_FILE

        state = self.read_state(cell)
        if state is None:
            return CellStatus(cell, PENDING)
        status = state.get("status")
        if status == DONE and (cell.folder(self.path) / TRAINER_STATE_FILE).exists():
            return CellStatus(cell, DONE, state=state)
        if status == FAILED:
            return CellStatus(cell, FAILED, str(state.get("error", "")), state)
        if status == RUNNING and (self.locked() or _slurm_job_alive(state)):
            return CellStatus(cell, RUNNING, state=state)
        return CellStatus(
            cell, PENDING, "interrupted: its driver stopped before it finished", state
        )


def _slurm_job_alive(state: dict[str, Any]) -> bool:
    """Whether the Slurm job that runs a cell is still queued or running (sacct, through
    submitit); False off Slurm."""
    job_id, folder = state.get("slurm_job_id"), state.get("slurm_folder")
    if not job_id or not folder:
        return False
    try:
        import submitit

        job = submitit.SlurmJob(folder=folder, job_id=str(job_id))
        return job.state in ("PENDING", "RUNNING", "REQUEUED", "CONFIGURING", "UNKNOWN")
    except Exception:  # no sacct here: the job cannot be asked, so it is not known alive
        return False
