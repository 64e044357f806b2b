"""Downstream tasks: fine-tune a masked LM's encoder on a task, score utility and bias.

One module per task registers a :class:`~cdsbias.downstream.base.Task` subclass (GLUE's
module registers one per GLUE task); :func:`get_task` finds it by name with a "Did you
mean ...?". The shared modules (``base``, ``data``, ``metrics``, ``finetune``, ``runner``)
are not tasks. Layering: this package reads models through :mod:`cdsbias.scoring` and
post-hoc maps through :mod:`cdsbias.methods`; nothing below it imports it.
"""

from __future__ import annotations

import importlib
import pkgutil

from cdsbias.downstream.base import REGISTRY, Task, TrainingDefaults, register
from cdsbias.errors import unknown_name_error

_NOT_TASKS = {"after_training", "base", "data", "finetune", "metrics", "runner"}


def load_all() -> None:
    """Imports every task module so that it registers itself."""
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _NOT_TASKS and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def get_task(name: str) -> type[Task]:
    """The task registered as ``name``.

    Raises:
        CdsbiasError: Unknown name: ``Unknown downstream task 'x'. Did you mean 'y'?
            Available: ...``.
    """
    load_all()
    if name not in REGISTRY:
        raise unknown_name_error("downstream task", name, REGISTRY)
    return REGISTRY[name]


def list_tasks() -> dict[str, str]:
    """``{name: description}`` of every registered task."""
    load_all()
    return {name: REGISTRY[name].description for name in sorted(REGISTRY)}


__all__ = ["REGISTRY", "Task", "TrainingDefaults", "get_task", "list_tasks", "load_all", "register"]
