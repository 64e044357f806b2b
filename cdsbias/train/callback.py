"""BiasEvalCallback: bias benchmarks and held-out MLM loss at step 0 and at every save.

Data flows one way: Trainer -> callback -> scorer -> benchmark -> tracker. Every rank
scores its shard of each benchmark's rows (groups that share sentences stay together, so shared
sentences are scored once), the shards are gathered, and the main process summarises,
logs and writes:

* ``OUTPUT/bias_metrics.jsonl``: one line per evaluated step (step 0, then each save);
* ``OUTPUT/bias_curve.png``: headline scores with CIs and held-out MLM loss vs step;
* ``OUTPUT/bias/step-N/<benchmark>/{rows.tsv,summary.json}``: full results per step;
* ``OUTPUT/checkpoint-N/bias_summary.json``: the summaries that belong to a checkpoint.

Scalars go through ``Trainer.log`` (so every ``report_to`` tracker gets them); W&B also
gets the tables each benchmark declares (:meth:`Benchmark.tracker_tables`). Nothing here
knows a benchmark by name: labels, curves and tables come from the benchmarks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from accelerate import PartialState
from accelerate.utils import broadcast_object_list, gather_object
from transformers import TrainerCallback

from cdsbias.benchmarks import Benchmark, BenchmarkResult, to_json, write_result
from cdsbias.errors import CdsbiasError
from cdsbias.runs.folder import RunFolder
from cdsbias.runs.points import draw_curve


def _rank_and_world() -> tuple[int, int]:
    state = PartialState()
    return state.process_index, state.num_processes


def _gather(obj: Any) -> list[Any]:
    """Every rank's ``obj``, in rank order, on every rank."""
    return gather_object([obj])


def _broadcast(obj: Any) -> Any:
    """The main process's ``obj`` on every rank."""
    return broadcast_object_list([obj])[0]


@contextlib.contextmanager
def preserve_rng() -> Iterator[None]:
    """Restores the Python, NumPy and torch (CPU and CUDA) generators on exit."""
    import random

    import numpy as np
    import torch

    python_state, numpy_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=range(torch.cuda.device_count())):
        try:
            yield
        finally:
            random.setstate(python_state)
            np.random.set_state(numpy_state)


class BiasEvalCallback(TrainerCallback):
    """Scores bias benchmarks before training and at every checkpoint.

    Args:
        benchmarks: Benchmark instances (their data is loaded now, so bad data fails
            before training starts).
        tokenizer: The model's tokenizer.
        output_dir: The run's output folder.
        batch_size: Scorer batch size.
        eval_at_start: Also score the model at step 0.
        heldout_dataset: Pre-masked original-text examples for the held-out MLM loss.
        scoring_model: What the scorer reads of the trained model (e.g. the model a
            parameter-efficient wrapper holds, whose layers carry the adapter); default
            the model itself.
        wrap_scorer: The scorer of the post-hoc point (the run's post-hoc method at
            scoring time, :meth:`~cdsbias.methods.MethodPlan.wrap_scorer`); default none.
        heldout_through_scorer: Read the held-out loss through the scorer at every point
            (:func:`~cdsbias.scoring.self_debias.debiased_mlm_loss`: the mean ``-ln p`` of
            the labelled tokens, all masked, under the distribution the scorer reads), so a
            decoding rule's point is measured as the others; else the Trainer's
            evaluation loss.

    Raises:
        CdsbiasError: No benchmark given, or a benchmark's data cannot be loaded.
    """

    def __init__(
        self,
        benchmarks: list[Benchmark],
        *,
        tokenizer: Any,
        output_dir: str | Path,
        batch_size: int = 64,
        eval_at_start: bool = True,
        heldout_dataset: Any = None,
        scoring_model: Callable[[Any], Any] | None = None,
        wrap_scorer: Callable[[Any], Any] | None = None,
        heldout_through_scorer: bool = False,
    ) -> None:
        if not benchmarks:
            raise CdsbiasError("BiasEvalCallback needs at least one benchmark.")
        import matplotlib

        matplotlib.use("Agg")  # checkpoints are drawn on headless machines too
        self.benchmarks = benchmarks
        for benchmark in benchmarks:
            _ = benchmark.rows  # read now: bad data fails before training starts
        self.tokenizer = tokenizer
        self.output_dir = Path(output_dir)
        self.folder = RunFolder(output_dir)
        self.scoring_model = scoring_model or (lambda model: model)
        self.wrap_scorer = wrap_scorer or (lambda scorer: scorer)
        self.heldout_through_scorer = heldout_through_scorer
        self.batch_size = batch_size
        self.eval_at_start = eval_at_start
        self.heldout_dataset = heldout_dataset
        self.trainer: Any = None

    def attach(self, trainer: Any) -> BiasEvalCallback:
        """Registers with ``trainer`` (needed to evaluate the held-out loss and to log)."""
        self.trainer = trainer
        trainer.add_callback(self)
        return self

    # ----------------------------------------------------------------- events
    def on_train_begin(self, args, state, control, model=None, **kwargs):
        rank, _ = _rank_and_world()
        steps_done = None
        if rank == 0:
            points = self.folder.points()
            if state.global_step == 0:
                kept: list[dict[str, Any]] = []
            else:
                # A resumed run: keep the curve up to the checkpoint, drop anything later
                # (it belonged to steps that will be trained again).
                kept = [p for p in points if p["step"] <= state.global_step]
            if len(kept) != len(points) or (state.global_step == 0 and points):
                self.folder.write_points(kept)
            steps_done = {p["step"] for p in kept}
        steps_done = _broadcast(steps_done)
        due = state.global_step > 0 or self.eval_at_start
        if due and state.global_step not in steps_done:
            self.evaluate(args, state, model)
        return control

    def on_save(self, args, state, control, model=None, **kwargs):
        self.evaluate(args, state, model)
        return control

    def evaluate(
        self, args: Any, state: Any, model: Any, *, posthoc: bool = False
    ) -> dict[str, Any]:
        """Scores every benchmark (sharded over ranks) and records the point.

        ``posthoc``: the point after the run's post-hoc method acted (scored through
        ``wrap_scorer``, recorded after the plain point of the same step).

        Random number generators are left exactly as they were: the checkpoint saved just
        before holds their state, so a resumed run continues as if never interrupted
        (a DataLoader draws a seed from the torch RNG every time it is iterated).
        """
        with preserve_rng():
            return self._evaluate(args, state, model, posthoc=posthoc)

    # ------------------------------------------------------------- evaluation
    def _evaluate(self, args: Any, state: Any, model: Any, *, posthoc: bool) -> dict[str, Any]:
        from cdsbias.scoring import MaskedLMScorer

        rank, world = _rank_and_world()
        step = int(state.global_step)
        point: dict[str, Any] = {"step": step, "epoch": state.epoch or 0.0}
        if posthoc:
            point["posthoc"] = True
        trainer_heldout = not self.heldout_through_scorer
        if self.heldout_dataset is not None and self.trainer is not None and trainer_heldout:
            metrics = self.trainer.evaluate(
                eval_dataset=self.heldout_dataset, metric_key_prefix="heldout"
            )
            point["heldout_loss"] = float(metrics["heldout_loss"])
        was_training = model.training
        model.eval()
        device = next(model.parameters()).device
        scorer = MaskedLMScorer(
            self.scoring_model(model), self.tokenizer, batch_size=self.batch_size, device=device
        )
        if posthoc:
            scorer = self.wrap_scorer(scorer)
        results: dict[str, BenchmarkResult] = {}
        try:
            if self.heldout_dataset is not None and not trainer_heldout and rank == 0:
                point["heldout_loss"] = self._scorer_heldout_loss(scorer)
            for benchmark in self.benchmarks:
                result = benchmark.evaluate(
                    scorer, rank=rank, world_size=world, gather=_gather, annotate={"step": step}
                )
                if result is not None:
                    results[benchmark.key] = result
        finally:
            if was_training:
                model.train()
        logged: dict[str, float] = {}
        if rank == 0:
            point["benchmarks"] = {}
            for benchmark in self.benchmarks:
                result = results[benchmark.key]
                point["benchmarks"][benchmark.key] = record(benchmark, result)
                for key, value in result.metrics.items():
                    if value is not None and math.isfinite(value):
                        logged[f"bias/{benchmark.key}/{key}"] = float(value)
                write_result(result, self.folder.results_dir(step, posthoc=posthoc))
            if "heldout_loss" in point:
                logged["bias/heldout_loss"] = point["heldout_loss"]
            self.folder.add_point(json.loads(to_json(point)))
            if not posthoc:  # a checkpoint holds the trained model, before the post-hoc step
                self._write_checkpoint_summary(step, results, point)
            self._draw_curve()
            self._log_tables(step, results)
        logged = _broadcast(logged)
        if self.trainer is not None and logged:
            self.trainer.log(dict(logged))
        return point

    def _scorer_heldout_loss(self, scorer: Any) -> float:
        """The held-out MLM loss under the distribution ``scorer`` reads, with every
        labelled position masked (the collator's 10% random and 10% kept tokens too: a
        decoding rule reads masked positions only), the same way at every point."""
        from cdsbias.scoring.self_debias import debiased_mlm_loss

        data = self.heldout_dataset
        labels = [list(row) for row in data["labels"]]
        inputs = [
            [scorer.mask_id if label != -100 else token for token, label in zip(ids, row)]
            for ids, row in zip(data["input_ids"], labels, strict=True)
        ]
        return debiased_mlm_loss(scorer, inputs, labels)

    # ---------------------------------------------------------------- outputs
    def _write_checkpoint_summary(
        self, step: int, results: dict[str, BenchmarkResult], point: dict[str, Any]
    ) -> None:
        payload = {
            "step": step,
            "heldout_loss": point.get("heldout_loss"),
            "benchmarks": {name: r.summary for name, r in results.items()},
        }
        self.folder.write_checkpoint_summary(step, to_json(payload))

    def _draw_curve(self) -> None:
        draw_curve(self.folder.points(), self.folder.curve_file)

    def _log_tables(self, step: int, results: dict[str, BenchmarkResult]) -> None:
        try:
            import wandb
        except ImportError:
            return
        if getattr(wandb, "run", None) is None:
            return
        for benchmark in self.benchmarks:
            tables = benchmark.tracker_tables(results[benchmark.key])
            for table_name, (columns, rows) in tables.items():
                table = wandb.Table(columns=["step", *columns])
                for row in rows:
                    table.add_data(step, *row)
                wandb.log({f"bias/{benchmark.key}/{table_name}": table,
                           "train/global_step": step})  # fmt: skip


def record(benchmark: Benchmark, result: BenchmarkResult) -> dict[str, Any]:
    """What a point of ``bias_metrics.jsonl`` keeps of one benchmark's result.

    Besides metrics and curve it keeps what readers of the run (report, publish, plots)
    need without re-creating the benchmark: its headline metrics with unit and
    direction, curve labels, language and options; for a benchmark scoped to a bias axis
    (key ``NAME[race]``), the axis and the headline metrics' 95% intervals with the name of
    the interval, which the cross-axis matrix of ``cdsbias compare`` and the card show.
    """
    entry = {
        "metrics": result.metrics,
        "curve": benchmark.curve_points(result.summary, result.metrics),
        "headline": [dataclasses.asdict(m) for m in benchmark.headline_metrics()],
        "curve_title": benchmark.curve_title,
        "curve_ylabel": benchmark.curve_ylabel,
        "language": benchmark.language,
        "options": benchmark.option_values(),
    }
    if benchmark.axis is not None:  # (unscoped entries keep their keys: gender runs as before)
        entry["axis"] = benchmark.axis
        entry["intervals"] = {k: list(v) for k, v in benchmark.intervals(result.summary).items()}
        entry["interval"] = benchmark.interval_name
    return entry
