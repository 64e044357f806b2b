"""``cdsbias downstream``'s work: every model, variant and seed on one task, and its folder.

``OUT/<task>/`` holds

* ``rows.tsv``: one row per (model, variant, seed, test example): ``example`` (the test
  example's index), the task's label and group columns, ``prediction`` — every metric can
  be recomputed from it;
* ``seeds.tsv``: one row per fine-tuning: each metric, training steps, seconds, examples/s;
* ``summary.json``: per model and variant, each metric on every seed's predictions pooled
  with its bootstrap interval over test examples, each seed's values, notes; the task,
  its options, data, citation and the fine-tuning recipe.

The folder is written through a staging folder that replaces ``OUT/<task>`` only when
everything succeeded, so a failure leaves nothing behind.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from cdsbias.downstream import get_task
from cdsbias.downstream.base import Task
from cdsbias.downstream.finetune import FinetuneConfig, finetune_and_predict
from cdsbias.train.run import is_main_process

ROWS_FILE = "rows.tsv"
SEEDS_FILE = "seeds.tsv"
SUMMARY_FILE = "summary.json"


@dataclass
class ModelInput:
    """A model to fine-tune: what the user named, loaded, and its post-hoc projection."""

    name: str
    masked_lm: Any
    tokenizer: Any
    erasure: Any = None

    @property
    def variants(self) -> tuple[str, ...]:
        return ("fold", "hook") if self.erasure is not None else ("none",)


def load_model_input(name: str) -> ModelInput:
    """Loads ``name`` through :func:`~cdsbias.scoring.loading.load_masked_lm` and reads the
    post-hoc projection its folder holds (``posthoc_erasure.safetensors``), if any.

    Raises:
        CdsbiasError: The model cannot be loaded or has no encoder to put a head on.
    """
    from cdsbias.downstream.finetune import encoder_of
    from cdsbias.methods.erasure import ERASURE_FILE, AffineErasure
    from cdsbias.scoring.loading import load_masked_lm

    masked_lm, tokenizer = load_masked_lm(name, progress=False)
    encoder_of(masked_lm, name)
    folder = Path(name)
    erasure = AffineErasure.load(folder) if (folder / ERASURE_FILE).is_file() else None
    return ModelInput(name, masked_lm, tokenizer, erasure)


def check_input_length(
    model: ModelInput, task: Task, splits: Mapping[str, pd.DataFrame], config: FinetuneConfig
) -> None:
    """Refuses a ``max_length`` the model has no positions for.

    An explicit ``--max-length`` above the model's limit (its position embeddings,
    :func:`~cdsbias.scoring.encoding.input_limit`) is refused. The task's default is kept
    when every input fits the model anyway (truncation at the default is then the same as
    at the limit), and refused with the fix when some input does not.

    Raises:
        CdsbiasError: One line naming the model, its limit and the ``--max-length`` to use.
    """
    from cdsbias.errors import CdsbiasError
    from cdsbias.scoring.encoding import input_limit

    limit = input_limit(model.masked_lm, model.tokenizer)
    max_length = config.resolved(task)["max_length"]
    if limit is None or max_length <= limit:
        return
    if config.max_length is not None:
        raise CdsbiasError(
            f"--max-length {max_length} is longer than {model.name} can read ({limit} "
            f"positions); pass --max-length {limit} or less."
        )
    columns = list(task.text_columns)
    for split, frame in splits.items():
        texts = [frame[c].astype(str).tolist() for c in columns]
        lengths = [len(ids) for ids in model.tokenizer(*texts, verbose=False)["input_ids"]]
        if lengths and max(lengths) > limit:
            raise CdsbiasError(
                f"{task.name}'s {split} split has inputs of up to {max(lengths)} tokens, but "
                f"{model.name} reads at most {limit} (its positions); pass --max-length "
                f"{limit} to truncate them there."
            )


def run_downstream(
    models: Sequence[str],
    task_name: str,
    out: Path,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    options: Mapping[str, Any] | None = None,
    data_dir: Path | None = None,
    config: FinetuneConfig | None = None,
    loaded: Mapping[str, ModelInput] | None = None,
    roles: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Fine-tunes each model (each variant, each seed) on the task; writes ``OUT/<task>/``.

    Every input is checked (task, options, data, models) before the folder is touched.

    Args:
        models: Hub ids or folders of masked LMs.
        task_name: A registered task.
        out: The output folder; ``OUT/<task>/`` is replaced.
        seeds: Fine-tuning seeds.
        options: The task's options.
        data_dir: Local data instead of the hub dataset.
        config: The fine-tuning recipe (default: the task's).
        loaded: Models already loaded, by name (tests, ``train.py``).
        roles: ``{model: role}`` recorded with its results (``base``/``final`` after a
            training run, what the card and ``cdsbias compare`` read).

    Returns:
        The summary written to ``summary.json``.
    """
    from cdsbias.errors import CdsbiasError
    from cdsbias.io import atomic_output_dir

    if not seeds:
        raise CdsbiasError("--seeds: give at least one seed.")
    if len(set(seeds)) != len(seeds):
        raise CdsbiasError(f"--seeds lists a seed twice: {list(seeds)}.")
    # A folder named two ways (./m and m) is one model too.
    same = [str(Path(n).resolve()) if Path(n).exists() else n for n in models]
    repeated = [name for name, key in zip(models, same, strict=True) if same.count(key) > 1]
    if repeated:
        raise CdsbiasError(
            f"MODEL is the same model twice ({' and '.join(dict.fromkeys(repeated))}); each "
            "model is fine-tuned once per seed (--seeds N gives more runs). Name it once."
        )
    task: Task = get_task(task_name)(options, data_dir)
    config = config or FinetuneConfig()
    splits = task.load()
    inputs = [dict(loaded or {}).get(name) or load_model_input(name) for name in models]
    for model in inputs:  # before any fine-tuning starts
        check_input_length(model, task, splits, config)

    rows, seed_rows, entries = [], [], []
    for model in inputs:
        for variant in model.variants:
            frames = []
            for seed in seeds:
                result = finetune_and_predict(
                    model.masked_lm, model.tokenizer, task, splits, seed=seed, config=config,
                    variant=variant, erasure=model.erasure, shown=model.name,
                )  # fmt: skip
                frame = splits["test"][[task.label_column, *task.group_columns]].copy()
                # A task whose test rows come in units (pairs) names them; else one per row.
                test = splits["test"]
                ids = test["example"] if "example" in test else range(len(frame))
                frame.insert(0, "example", list(ids))
                frame.insert(0, "seed", seed)
                frame.insert(0, "variant", variant)
                frame.insert(0, "model", model.name)
                frame["prediction"] = result.predictions
                frames.append(frame)
                seed_rows.append(
                    {"model": model.name, "variant": variant, "seed": seed,
                     **task.statistics(frame), "steps": result.steps,
                     "train_seconds": round(result.train_seconds, 3),
                     "train_examples_per_second": round(result.train_examples_per_second, 3)}
                )  # fmt: skip
            model_rows = pd.concat(frames, ignore_index=True)
            rows.append(model_rows)
            summary = task.summarize(model_rows)
            if hasattr(task, "per_group"):
                summary["per_group"] = task.per_group(model_rows)
            role = (roles or {}).get(model.name)
            entries.append({"model": model.name, "role": role, "variant": variant, **summary})

    summary = {
        "task": task.name,
        "description": task.description,
        "citation": task.citation,
        "options": task.option_values(),
        "data": task.facts,
        "training": config.resolved(task),
        "seeds": list(seeds),
        "headline": [
            {"key": m.key, "label": m.label, "unit": m.unit, "better": m.better, "ideal": m.ideal}
            for m in task.headline
        ],
        "results": entries,
    }
    if not is_main_process():  # under accelerate launch every process fine-tuned; one writes
        return summary
    with atomic_output_dir(Path(out) / task.name) as staging:
        pd.concat(rows, ignore_index=True).to_csv(staging / ROWS_FILE, sep="\t", index=False)
        pd.DataFrame(seed_rows).to_csv(staging / SEEDS_FILE, sep="\t", index=False)
        (staging / SUMMARY_FILE).write_text(
            json.dumps(_finite(summary), indent=2) + "\n", encoding="utf-8"
        )
    return summary


def _finite(value: Any) -> Any:
    """NaN and infinities as ``null`` (strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def format_summary(summary: Mapping[str, Any]) -> str:
    """A markdown table: one row per model and variant, each headline metric with its CI."""
    keys = [h["key"] for h in summary["headline"]]
    labels = [h["label"] for h in summary["headline"]]
    lines = [
        f"{summary['task']}: {len(summary['seeds'])} seed(s), {summary['data'].get('n_test')} "
        "test examples, 95% bootstrap intervals over test examples (seeds pooled)",
        "",
        "| model | variant | " + " | ".join(labels) + " |",
        "|---|---|" + "---|" * len(keys),
    ]
    for entry in summary["results"]:
        cells = []
        for key in keys:
            metric = entry["metrics"].get(key) or {}
            value, low, high = (metric.get(k) for k in ("value", "ci_low", "ci_high"))
            if value is None:
                cells.append("n/a")
            elif low is None or high is None:
                cells.append(f"{value:.3f}")
            else:
                cells.append(f"{value:.3f} [{low:.3f}, {high:.3f}]")
        lines.append(f"| {entry['model']} | {entry['variant']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
