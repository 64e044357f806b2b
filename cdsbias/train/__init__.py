"""Fine-tuning with per-checkpoint bias evaluation (recipe config, data, callback).

Names are imported on first use (PEP 562), so that readers of finished runs
(``cdsbias.runs.points``) do not load transformers through this package.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "BiasEvalCallback": "cdsbias.train.callback",
    "BiasEvalConfig": "cdsbias.train.config",
    "CDSConfig": "cdsbias.train.config",
    "DataConfig": "cdsbias.train.config",
    "ModelConfig": "cdsbias.train.config",
    "Recipe": "cdsbias.train.config",
    "RunConfig": "cdsbias.train.config",
    "draw_curve": "cdsbias.runs.points",
    "load_recipe": "cdsbias.train.config",
    "read_points": "cdsbias.runs.points",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'cdsbias.train' has no attribute '{name}'")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
