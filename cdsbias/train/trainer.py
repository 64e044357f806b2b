"""The Trainer of a cdsbias run: ``transformers.Trainer`` plus the method plan's loss term."""

from __future__ import annotations

from typing import Any

from transformers import Trainer

from cdsbias.methods import MethodPlan


class DebiasTrainer(Trainer):
    """``transformers.Trainer`` whose training loss adds the loss term of the run's
    ``loss`` method (:meth:`cdsbias.methods.Method.loss_terms`).

    Every named term is added to the model's MLM loss (times the method's
    :meth:`~cdsbias.methods.Method.mlm_weight`) while training (never to the
    held-out evaluation, whose loss stays the plain MLM loss on original text) and logged
    as ``debias/<name>``, averaged over the steps since the last log. With gradient
    accumulation each micro-batch adds its own term. Without a ``loss`` method this is
    exactly the ``Trainer``.

    Args:
        plan: The run's method plan.
        *args: Passed to ``Trainer``.
        **kwargs: Passed to ``Trainer``.
    """

    def __init__(self, *args: Any, plan: MethodPlan, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plan = plan
        self._term_sums: dict[str, float] = {}
        self._term_steps = 0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        method = self.plan.loss
        if method is None or not model.training:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        inputs = {**inputs, "output_hidden_states": True}
        loss, outputs = super().compute_loss(
            model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch
        )
        terms = method.loss_terms(model, inputs, outputs)
        weight = self.plan.mlm_weight()
        if weight != 1.0:  # the loss method weighs the MLM loss itself (0: terms only)
            loss = weight * loss
        for name, value in terms.items():
            loss = loss + value
            self._term_sums[name] = self._term_sums.get(name, 0.0) + float(value.detach())
        self._term_steps += 1 if terms else 0
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if self._term_steps and "loss" in logs:  # a training log, not an evaluation's
            for name, total in self._term_sums.items():
                logs[f"debias/{name}"] = total / self._term_steps
            self._term_sums, self._term_steps = {}, 0
        super().log(logs, start_time)
