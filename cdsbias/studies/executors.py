"""Where a study's cells run: this machine (a pool of N cells at once) or Slurm (submitit).

Both hand :func:`cdsbias.studies.job.run_cell` one cell at a time; neither schedules
anything itself. ``local`` is a ``concurrent.futures`` pool of ``jobs`` workers, each
running one cell's process at a time with ``cores // jobs`` threads. ``slurm`` submits the
cells as one submitit job array (partition, GPUs, CPUs, time limit from the spec's
``slurm:`` keys); a cell with GPUs is started with ``accelerate launch`` on one process per
GPU, with the spec's accelerate config.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.studies.cells import Cell
from cdsbias.studies.job import Launch, run_cell
from cdsbias.studies.spec import SlurmSpec

EXECUTORS = ("local", "slurm")


def cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def threads_per_cell(jobs: int) -> int | None:
    """``OMP_NUM_THREADS`` of each cell: the environment's when set (what the user chose),
    else the cores split between the cells that run at once."""
    if os.environ.get("OMP_NUM_THREADS"):
        return None
    return max(1, cores() // jobs)


def run_local(
    study: Path,
    cells: Sequence[Cell],
    *,
    jobs: int,
    env: dict[str, str],
    report: Callable[[Cell, str], None],
) -> list[str]:
    """Runs ``cells`` here, ``jobs`` at a time, started in the order given; returns each
    cell's status, in that order."""
    launch = Launch(threads=threads_per_cell(jobs), env=env)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_cell, study, cell, launch): cell for cell in cells}
        for future in as_completed(futures):  # each cell reported when it ends
            report(futures[future], future.result())
    return [future.result() for future in futures]


def slurm_executor(study: Path, slurm: SlurmSpec, *, cluster: str | None = None) -> Any:
    """A submitit executor for the study's cells.

    Args:
        study: The study folder (submitit's logs go to ``STUDY/slurm``).
        slurm: The spec's Slurm keys.
        cluster: submitit's cluster: None picks Slurm when ``sbatch`` is there; ``local``
            and ``debug`` are submitit's own stand-ins (the tests run those).

    Raises:
        CdsbiasError: submitit finds no Slurm (no ``sbatch``) and no other cluster was named.
    """
    import submitit

    folder = study / "slurm"
    executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
    if cluster is None and executor.cluster != "slurm":
        raise CdsbiasError(
            "--executor slurm: there is no Slurm here (no sbatch on PATH); run on the cluster's "
            "login node, or use --executor local."
        )
    parameters: dict[str, Any] = {
        "timeout_min": slurm.time_min,
        "cpus_per_task": slurm.cpus_per_cell,
        "slurm_array_parallelism": slurm.array_parallelism,
        "slurm_mem_gb": slurm.mem_gb,
        "name": f"cdsbias-{study.name}",
    }
    if slurm.partition:
        parameters["slurm_partition"] = slurm.partition
    if slurm.gpus_per_cell:
        parameters["gpus_per_node"] = slurm.gpus_per_cell
    executor.update_parameters(**parameters)
    return executor


def slurm_launch(slurm: SlurmSpec, env: dict[str, str]) -> Launch:
    """A GPU cell runs under ``accelerate launch`` with one process per GPU (the spec's
    accelerate config when it names one); a CPU cell as one process."""
    if not slurm.gpus_per_cell:
        return Launch(threads=slurm.cpus_per_cell, env=env)
    arguments = ["--num_processes", str(slurm.gpus_per_cell), "--num_machines", "1"]
    if slurm.accelerate_config:
        arguments = ["--config_file", str(Path(slurm.accelerate_config).resolve()), *arguments]
    return Launch(accelerate=arguments, env=env)


def run_slurm(
    study: Path,
    cells: Sequence[Cell],
    *,
    slurm: SlurmSpec,
    env: dict[str, str],
    report: Callable[[Cell, str], None],
    cluster: str | None = None,
) -> list[str]:
    """Submits ``cells`` as one job array and waits for them; returns their statuses.

    A cell's job records its own state, so a driver that stops waiting (killed, or the
    login session ends) leaves the jobs running; ``study status`` asks Slurm about them.
    """
    executor = slurm_executor(study, slurm, cluster=cluster)
    env = {**env, "CDSBIAS_STUDY_SLURM": str(study / "slurm")}
    launch = slurm_launch(slurm, env)
    jobs = executor.map_array(run_cell, [study] * len(cells), list(cells), [launch] * len(cells))
    array = str(jobs[0].job_id).split("_")[0] if jobs else ""
    print(f"submitted {len(jobs)} cell(s) as {executor.cluster} job array {array}", file=sys.stderr)
    statuses = []
    for cell, job in zip(cells, jobs):
        try:
            status = job.result()
        except Exception as exc:  # the job itself died (time limit, node failure)
            from cdsbias.studies.state import FAILED, StudyFolder

            line = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            StudyFolder(study).write_state(cell, FAILED, error=f"the job failed: {line}")
            status = FAILED
        report(cell, status)
        statuses.append(status)
    return statuses
