"""Trainer callbacks of the training methods (:mod:`cdsbias.train.methods`).

Kept apart from the method configuration: ``transformers.TrainerCallback`` loads the
Trainer stack (and peft), which reading a recipe does not need.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from cdsbias.train.methods import MethodConfig


class MethodCheckpointCallback(TrainerCallback):
    """Adds a bottleneck adapter, alone, to every checkpoint and to the output folder.

    The Trainer saves (and on resume restores) the full model, adapter included; these
    files are what ``load_masked_lm`` and :func:`cdsbias.bottleneck.load_bottleneck` read.
    """

    def on_save(self, args, state, control, model=None, **kwargs):
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        self._save(state, model, folder)
        return control

    def on_train_end(self, args, state, control, model=None, **kwargs):
        self._save(state, model, Path(args.output_dir))
        return control

    @staticmethod
    def _save(state: Any, model: Any, folder: Path) -> None:
        from cdsbias.bottleneck import save_bottleneck

        if state.is_world_process_zero and model is not None and folder.is_dir():
            save_bottleneck(model, folder)


class TrainBeginCallback(TrainerCallback):
    """Calls ``action`` when training begins, after the Trainer's tracker integrations
    have started their runs (W&B starts in its own ``on_train_begin``; the callbacks of
    ``report_to`` precede the ones a Trainer is given)."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action

    def on_train_begin(self, args, state, control, **kwargs):
        self.action()
        return control


def method_callbacks(cfg: MethodConfig) -> list[Any]:
    """The Trainer callbacks the method needs."""
    return [MethodCheckpointCallback()] if cfg.peft_method == "adapter" else []
