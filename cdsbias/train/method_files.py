"""Saving what the Trainer does not: each method's own files in every checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from cdsbias.methods import MethodPlan


class MethodFilesCallback(TrainerCallback):
    """Calls :meth:`MethodPlan.save` on the main process for every checkpoint and for the
    output folder at the end (e.g. an adapter alone, beside the full weights the Trainer
    resumes from)."""

    def __init__(self, plan: MethodPlan) -> None:
        self.plan = plan

    def on_save(self, args, state, control, model=None, **kwargs):
        self._save(state, model, Path(args.output_dir) / f"checkpoint-{state.global_step}")
        return control

    def on_train_end(self, args, state, control, model=None, **kwargs):
        self._save(state, model, Path(args.output_dir))
        return control

    def _save(self, state: Any, model: Any, folder: Path) -> None:
        if state.is_world_process_zero and model is not None and folder.is_dir():
            self.plan.save(model, folder)
