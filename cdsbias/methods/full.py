"""Full fine-tuning: every weight of the model trains (the default when a recipe chooses
no other way of training)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdsbias.methods.base import Method, register


@register
class FullFineTuning(Method):
    name = "full"
    role = "weights"
    title = "full fine-tuning"
    description = "every weight of the model was trained"
    selected_by = "the default: no peft_method and no trainable_parameters"

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        # Chosen by the plan when no other way of training is (see plan.weights_method).
        return False
