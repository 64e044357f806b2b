"""Experiment trackers: W&B offline without a key, and the recipe in the tracker's config."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from accelerate import PartialState
from transformers import TrainerCallback


def configure_tracking(report_to: Any, output_dir: str | Path) -> str | None:
    """W&B without an API key runs offline (no network call can block training).

    Returns:
        The W&B mode in effect, or None when W&B is not a tracker of the run.
    """
    targets = [report_to] if isinstance(report_to, str) else list(report_to or [])
    if "wandb" not in targets and "all" not in targets:
        return None
    os.environ.setdefault("WANDB_DIR", str(Path(output_dir).resolve()))
    Path(os.environ["WANDB_DIR"]).mkdir(parents=True, exist_ok=True)
    has_key = bool(os.environ.get("WANDB_API_KEY")) or (Path.home() / ".netrc").exists()
    if not has_key and os.environ.get("WANDB_MODE") not in ("offline", "disabled"):
        os.environ["WANDB_MODE"] = "offline"
    os.environ.setdefault("WANDB_PROJECT", "cdsbias")
    return os.environ.get("WANDB_MODE")


class RecipeLogCallback(TrainerCallback):
    """Adds the cdsbias recipe and the method summary (what trained, how many parameters)
    to the W&B config when training begins (TrainingArguments are logged by the Trainer's
    own integration).

    W&B starts its run in its own ``on_train_begin``; the callbacks of ``report_to``
    precede the ones a Trainer is given, so the run exists by then.
    """

    def __init__(self, recipe: dict[str, Any], method: dict[str, Any] | None) -> None:
        self.recipe = recipe
        self.method = method

    def on_train_begin(self, args, state, control, **kwargs):
        if not PartialState().is_main_process:
            return control
        try:
            import wandb
        except ImportError:
            return control
        if getattr(wandb, "run", None) is not None:
            wandb.config.update(
                {"cdsbias": self.recipe, "cdsbias_method": self.method}, allow_val_change=True
            )
        return control
