"""Fine-tuning with per-checkpoint bias evaluation (recipe config, data, callback)."""

from cdsbias.train.callback import BiasEvalCallback, draw_curve, read_points
from cdsbias.train.config import (
    BiasEvalConfig,
    CDSConfig,
    DataConfig,
    ModelConfig,
    Recipe,
    RunConfig,
    load_recipe,
)

__all__ = [
    "BiasEvalCallback",
    "BiasEvalConfig",
    "CDSConfig",
    "DataConfig",
    "ModelConfig",
    "Recipe",
    "RunConfig",
    "draw_curve",
    "load_recipe",
    "read_points",
]
