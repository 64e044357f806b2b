"""The training entry point: ``accelerate launch train.py RECIPE.yaml [key=value ...]``."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from cdsbias.errors import CdsbiasError
from cdsbias.hub import hub_model_id
from cdsbias.io import atomic_write_text
from cdsbias.train.card_recipe import card_recipe
from cdsbias.train.config import Recipe, load_recipe
from cdsbias.train.methods import (
    MethodConfig,
    apply_method,
    dropout_overrides,
    method_summary,
    summary_line,
)

#: What the publisher needs to know about a run: base model, corpus, the shaping keys.
RUN_INFO_FILE = "run_info.json"
RUN_MARKERS = ("bias_metrics.jsonl", "trainer_state.json", "config.json", "recipe.yaml")


def _is_main() -> bool:
    return int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0"))) == 0


def main_print(*args: Any) -> None:
    """Prints on the main process only (``accelerator.print`` without an Accelerator)."""
    if _is_main():
        print(*args, flush=True)


def resolve_resume(recipe: Recipe) -> str | None:
    """``resume_from_checkpoint``: a folder, or true/last for the latest checkpoint."""
    from transformers.trainer_utils import get_last_checkpoint

    value = recipe.training.resume_from_checkpoint
    if value is None or str(value).lower() in ("false", "none", ""):
        return None
    output_dir = recipe.training.output_dir
    if str(value).lower() in ("true", "last", "latest"):
        last = get_last_checkpoint(output_dir) if Path(output_dir).is_dir() else None
        if last is None:
            raise CdsbiasError(f"resume_from_checkpoint: no checkpoint-* folder in {output_dir}.")
        return last
    if not Path(value).is_dir():
        raise CdsbiasError(f"resume_from_checkpoint: {value} is not a folder.")
    return str(value)


def refuse_fsdp_without_accelerator(training: Any) -> None:
    """Stops an FSDP launch that would silently train something else.

    ``accelerate launch --config_file recipes/accelerate/fsdp.yaml`` sets
    ``ACCELERATE_USE_FSDP=true``, but accelerate applies it only when the processes sit on
    GPUs (or another accelerator): on CPU processes (gloo) it trains plain DDP, and without
    ``use_cpu`` on a GPU-less machine each process trains alone. torch's FSDP itself runs on
    CPU/gloo; accelerate just never selects it there (README, "Launch configs").

    Args:
        training: The run's ``TrainingArguments``.

    Raises:
        CdsbiasError: An FSDP launch whose processes have no accelerator.
    """
    if os.environ.get("ACCELERATE_USE_FSDP", "false").lower() != "true":
        return
    from accelerate.utils import DistributedType

    _ = training.device  # sets up the processes' PartialState the Trainer will use
    state = training.distributed_state
    if state is None or state.distributed_type in (DistributedType.MULTI_CPU, DistributedType.NO):
        raise CdsbiasError(
            "an FSDP launch config needs GPUs: on CPU processes accelerate would train plain "
            "DDP (or, without use_cpu, one separate run per process) instead; on CPUs launch "
            "with --config_file recipes/accelerate/multi_gpu.yaml and use_cpu=true."
        )


def prepare_output_dir(recipe: Recipe, resume: str | None, *, delete: bool = True) -> bool:
    """Refuses to write into a folder that holds another run, unless told to.

    Returns whether the folder holds a run that ``overwrite_output_dir`` allows deleting;
    with ``delete=False`` it is only checked (the caller deletes it once every input has
    been read, so a bad input never costs an earlier run).
    """
    output_dir = Path(recipe.training.output_dir)
    if output_dir.exists() and not output_dir.is_dir():
        raise CdsbiasError(f"output_dir {output_dir} exists and is not a folder.")
    holds_run = output_dir.is_dir() and (
        any(output_dir.glob("checkpoint-*")) or any((output_dir / m).exists() for m in RUN_MARKERS)
    )
    if holds_run and resume is None:
        if not recipe.run.overwrite_output_dir:
            raise CdsbiasError(
                f"output_dir {output_dir} holds another run; nothing was overwritten. Resume it "
                "with resume_from_checkpoint=true, pick another output_dir, or pass "
                "overwrite_output_dir=true to delete it."
            )
        if delete and _is_main():
            shutil.rmtree(output_dir)
        return True
    return False


def run_info(
    effective: dict[str, Any],
    data: Any,
    n_documents: int | None = None,
    method: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the publisher needs of a run (``run_info.json``): the hub id of the base model
    (none for a model built here), the corpus for the card, the recipe keys that shaped it,
    and what was trained.

    Args:
        effective: The run's effective recipe (plain values, as in ``recipe.yaml``).
        data: Its :class:`~cdsbias.train.config.DataConfig`.
        n_documents: The corpus size, when the caller has read it.
        method: :func:`~cdsbias.train.methods.method_summary` of the trained model (None
            for runs that did not record it).
    """
    from cdsbias.train.data import describe_corpus

    scratch = effective.get("init_from_scratch")
    return {
        "base_model": None if scratch else hub_model_id(effective.get("model_name_or_path")),
        "corpus": describe_corpus(data, n_documents=n_documents),
        "card_recipe": card_recipe(effective),
        "method": method,
    }


def configure_tracking(recipe: Recipe) -> str | None:
    """W&B without an API key runs offline (no network call can block training)."""
    report_to = recipe.training.report_to
    targets = [report_to] if isinstance(report_to, str) else list(report_to or [])
    if "wandb" not in targets and "all" not in targets:
        return None
    os.environ.setdefault("WANDB_DIR", str(Path(recipe.training.output_dir).resolve()))
    Path(os.environ["WANDB_DIR"]).mkdir(parents=True, exist_ok=True)
    has_key = bool(os.environ.get("WANDB_API_KEY")) or (Path.home() / ".netrc").exists()
    if not has_key and os.environ.get("WANDB_MODE") not in ("offline", "disabled"):
        os.environ["WANDB_MODE"] = "offline"
    os.environ.setdefault("WANDB_PROJECT", "cdsbias")
    return os.environ.get("WANDB_MODE")


def build_model(
    recipe: Recipe, resume: str | None = None, documents: Any = None
) -> tuple[Any, Any]:
    """Loads the pretrained masked LM, or builds a random one with its own tokenizer, with
    the recipe's dropout, and prepares it for the recipe's method (frozen parameters,
    LoRA or bottleneck adapters; :func:`~cdsbias.train.methods.apply_method`).

    A resumed run of full or partial fine-tuning takes model and tokenizer from its
    checkpoint (the Trainer then restores the optimizer state), so a from-scratch tokenizer
    is never rebuilt differently. A resumed adapter run rebuilds base and fresh adapter;
    the Trainer then restores the adapter (LoRA) or the full weights (bottleneck) from the
    checkpoint.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from cdsbias.scoring import load_masked_lm
    from cdsbias.train.streaming import load_stream, tokenizer_texts
    from cdsbias.wordpiece import train_wordpiece

    model_cfg, method = recipe.model, recipe.method
    if resume is not None and method.peft_method == "none":
        overrides = _dropout_of(resume, None, method)
        model, tokenizer = load_masked_lm(resume, config_overrides=overrides)
        return apply_method(model, method)[0], tokenizer
    if not model_cfg.init_from_scratch:
        name, revision = model_cfg.model_name_or_path, model_cfg.model_revision
        overrides = _dropout_of(name, revision, method)
        model, tokenizer = load_masked_lm(name, revision=revision, config_overrides=overrides)
        return apply_method(model, method)[0], tokenizer
    streaming = recipe.data.streaming
    if documents is None:
        from cdsbias.train.data import load_documents

        documents = (load_stream if streaming else load_documents)(recipe.data)
    texts = tokenizer_texts(documents, recipe.data) if streaming else documents["text"]
    tokenizer = train_wordpiece(texts, model_cfg.tokenizer_vocab_size)
    settings = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                "intermediate_size": 128, "max_position_embeddings": 512}  # fmt: skip
    settings.update(model_cfg.model_config)
    settings.update(dropout_overrides("bert", method))
    try:
        config = BertConfig(vocab_size=len(tokenizer), **settings)
    except TypeError as exc:
        raise CdsbiasError(f"model_config: {exc}") from None
    torch.manual_seed(recipe.training.seed)
    return apply_method(BertForMaskedLM(config), method)[0], tokenizer


def _dropout_of(name: str, revision: str | None, method: MethodConfig) -> dict[str, float] | None:
    """Config overrides for the method's dropout, under the names of ``name``'s family."""
    if method.dropout is None:
        return None
    from transformers import AutoConfig

    try:
        model_type = AutoConfig.from_pretrained(name, revision=revision).model_type
    except (OSError, ValueError):
        return None  # load_masked_lm reports the unloadable model in its own words
    return dropout_overrides(model_type, method)


def run(recipe: Recipe) -> Path:
    """Trains with bias evaluation; returns the output folder."""
    from transformers import Trainer, set_seed
    from transformers.utils import logging as hf_logging

    from cdsbias.train.callback import BiasEvalCallback
    from cdsbias.train.data import (
        EpochCallback,
        MLMCollator,
        build_training_data,
        load_documents,
    )
    from cdsbias.train.method_callbacks import TrainBeginCallback, method_callbacks
    from cdsbias.train.points import CURVE_FILE, METRICS_FILE, read_points
    from cdsbias.train.streaming import build_streaming_data, load_stream

    training = recipe.training
    # The collator needs example_id (deterministic masking); it drops what the model can't take.
    training.remove_unused_columns = False
    if "average_tokens_across_devices" not in recipe.source:
        # With it on, transformers 5 multiplies the *evaluation* loss by the number of
        # processes under DDP, which would corrupt the held-out MLM loss curve.
        training.average_tokens_across_devices = False
    refuse_fsdp_without_accelerator(training)
    resume = resolve_resume(recipe)
    prepare_output_dir(recipe, resume, delete=False)  # refuse early, delete nothing yet
    # Every input is read before the output folder is touched: bad benchmark data or a
    # bad corpus fails with an earlier run intact, even with overwrite_output_dir=true.
    benchmarks = recipe.bias.build_benchmarks()
    for benchmark in benchmarks:
        _ = benchmark.rows
    with training.main_process_first(desc="reading the corpus"):
        # Read once: tokenizer, data and card use it. A stream is only opened and checked.
        documents = (load_stream if recipe.data.streaming else load_documents)(recipe.data)
    prepare_output_dir(recipe, resume)
    wandb_mode = configure_tracking(recipe)
    hf_logging.set_verbosity_warning()
    set_seed(training.seed)

    model, tokenizer = build_model(recipe, resume, documents)
    method = method_summary(model, recipe.method)
    main_print(summary_line(method))
    with training.main_process_first(desc="preparing the corpus"):
        if recipe.data.streaming:
            data = build_streaming_data(
                recipe.data, recipe.cds, tokenizer, seed=training.seed, stream=documents
            )
        else:
            data = build_training_data(
                recipe.data, recipe.cds, tokenizer, seed=training.seed, documents=documents
            )

    output_dir = Path(training.output_dir)
    if _is_main():
        output_dir.mkdir(parents=True, exist_ok=True)
        effective = recipe.effective()
        n_examples = None if recipe.data.streaming else len(data.train)  # a stream: unknown
        effective.update(n_documents=data.n_documents, n_counterfactual=data.n_counterfactual,
                         n_train_examples=n_examples)  # fmt: skip
        plain = json.loads(json.dumps(effective, default=str))  # YAML/JSON-safe values
        recipe_text = yaml.safe_dump(plain, sort_keys=True)
        (output_dir / "recipe.yaml").write_text(recipe_text)
        info = run_info(plain, recipe.data, n_documents=data.n_documents, method=method)
        atomic_write_text(output_dir / RUN_INFO_FILE, json.dumps(info, indent=2) + "\n")
        main_print("cdsbias effective recipe:")
        main_print(recipe_text)

    bias = recipe.bias
    callback = BiasEvalCallback(
        benchmarks, tokenizer=tokenizer, output_dir=output_dir,
        batch_size=bias.bias_eval_batch_size, eval_at_start=bias.bias_eval_at_start,
        heldout_dataset=data.heldout,
    )  # fmt: skip
    collator = MLMCollator(tokenizer, recipe.data.mlm_probability, seed=training.seed)
    trainer = Trainer(
        model=model,
        args=training,
        data_collator=collator,
        train_dataset=data.train,
        processing_class=tokenizer,
        callbacks=[EpochCallback(collator), *method_callbacks(recipe.method),
                   # W&B starts its run when training begins: log the recipe then.
                   TrainBeginCallback(lambda: _log_recipe_to_trackers(recipe, method))],
    )  # fmt: skip
    callback.attach(trainer)
    trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(str(output_dir))
    trainer.save_state()  # trainer_state.json: train_runtime and the log (cdsbias compare)
    if _is_main():
        points = read_points(output_dir)
        main_print(_before_after(points))
        main_print(f"bias curve:   {output_dir / CURVE_FILE}")
        main_print(f"bias metrics: {output_dir / METRICS_FILE}")
        if wandb_mode == "offline":
            runs = sorted((output_dir / "wandb").glob("offline-run-*"))
            where = runs[-1] if runs else output_dir / "wandb"
            main_print(f"W&B ran offline: upload with `wandb sync {where}`")
    return output_dir


def _log_recipe_to_trackers(recipe: Recipe, method: dict[str, Any] | None = None) -> None:
    """Adds the cdsbias sections and the method summary (what trained, how many
    parameters) to the W&B config (TrainingArguments are logged by the Trainer's own
    integration)."""
    if not _is_main():
        return
    try:
        import wandb
    except ImportError:
        return
    if getattr(wandb, "run", None) is not None:
        wandb.config.update(
            {"cdsbias": recipe.effective(), "cdsbias_method": method}, allow_val_change=True
        )


def _before_after(points: list[dict[str, Any]]) -> str:
    """Each benchmark's headline metrics and the held-out loss, first vs last point."""
    from cdsbias.benchmarks import format_value
    from cdsbias.train.points import before_after

    if len(points) < 1:
        return "no bias evaluation was recorded"
    summary = before_after(points)
    lines = [f"bias before (step {summary['first_step']}) and after (step {summary['last_step']}):"]
    for name, rows in summary["benchmarks"].items():
        for metric, start, end in rows:
            if end is None:
                continue
            lines.append(
                f"  {name}/{metric.key:<24} {format_value(start):>10} -> {format_value(end):>10}"
                f"  {metric.change(start, end)}"
            )
    if "heldout_loss" in summary:
        start, end = summary["heldout_loss"]
        lines.append(f"  held-out MLM loss {'':<17} {start:>10.4f} -> {end:>10.4f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``train.py RECIPE [key=value ...]``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="train.py",
        description="Fine-tune a masked LM on a CDS corpus with bias evaluation at every "
        "checkpoint. Launch with `accelerate launch train.py RECIPE.yaml [key=value ...]`.",
    )
    parser.add_argument("recipe", help="recipe YAML, e.g. recipes/gap_cds.yaml")
    parser.add_argument("overrides", nargs="*", help="key=value overrides of recipe keys")
    args = parser.parse_args(argv)
    try:
        run(load_recipe(args.recipe, args.overrides))
    except CdsbiasError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
