"""The training entry point: ``accelerate launch train.py RECIPE.yaml [key=value ...]``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.methods import MethodPlan
from cdsbias.runs.folder import RunFolder
from cdsbias.train.config import Recipe, load_recipe


def is_main_process() -> bool:
    """Whether this is the main process (accelerate's view of the launch)."""
    from accelerate import PartialState

    return PartialState().is_main_process


def main_print(*args: Any) -> None:
    """Prints on the main process only."""
    if is_main_process():
        print(*args, flush=True)


def refuse_fsdp_without_accelerator(training: Any) -> None:
    """Stops an FSDP launch that would silently train something else.

    ``accelerate launch --config_file recipes/accelerate/fsdp.yaml`` sets
    ``ACCELERATE_USE_FSDP=true``, but accelerate applies it only when the processes sit on
    GPUs (or another accelerator): on CPU processes (gloo) it trains plain DDP, and without
    ``use_cpu`` on a GPU-less machine each process trains alone. torch's FSDP itself runs on
    CPU/gloo; accelerate just never selects it there (docs/recipes.md, "Launch configs").

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


def build_model(
    recipe: Recipe, resume: str | None = None, documents: Any = None
) -> tuple[Any, Any]:
    """Loads the pretrained masked LM, or builds a random one with its own tokenizer, with
    the config values the recipe's methods ask for (e.g. dropout), and prepares it with
    the method plan (:meth:`~cdsbias.methods.MethodPlan.prepare`: frozen parameters,
    adapters, ...).

    A resumed run whose method trains full weights takes model and tokenizer from its
    checkpoint (the Trainer then restores the optimizer state), so a from-scratch tokenizer
    is never rebuilt differently. A method that trains an adapter rebuilds base and fresh
    adapter; the Trainer then restores what trains from the checkpoint.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from cdsbias.scoring import load_masked_lm
    from cdsbias.train.streaming import load_stream, tokenizer_texts
    from cdsbias.train.wordpiece import train_wordpiece

    model_cfg, plan = recipe.model, recipe.method
    if resume is not None and plan.weights.resumes_from_weights:
        overrides = _config_overrides(resume, None, plan)
        model, tokenizer = load_masked_lm(resume, config_overrides=overrides)
        return plan.prepare(model, tokenizer), tokenizer
    if not model_cfg.init_from_scratch:
        name, revision = model_cfg.model_name_or_path, model_cfg.model_revision
        overrides = _config_overrides(name, revision, plan)
        model, tokenizer = load_masked_lm(
            name, revision=revision, config_overrides=overrides, for_training=True
        )
        return plan.prepare(model, tokenizer), tokenizer
    streaming = recipe.data.streaming
    if documents is None:
        from cdsbias.train.data import load_documents

        documents = (load_stream if streaming else load_documents)(recipe.data)
    texts = tokenizer_texts(documents, recipe.data) if streaming else documents["text"]
    tokenizer = train_wordpiece(texts, model_cfg.tokenizer_vocab_size)
    settings = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                "intermediate_size": 128, "max_position_embeddings": 512}  # fmt: skip
    settings.update(model_cfg.model_config)
    settings.update(plan.config_overrides("bert"))
    try:
        config = BertConfig(vocab_size=len(tokenizer), **settings)
    except TypeError as exc:
        raise CdsbiasError(f"model_config: {exc}") from None
    torch.manual_seed(recipe.training.seed)
    return plan.prepare(BertForMaskedLM(config), tokenizer), tokenizer


def _config_overrides(name: str, revision: str | None, plan: MethodPlan) -> dict[str, Any] | None:
    """Config values the methods ask for, under the names of ``name``'s family."""
    if not plan.config_overrides("bert"):  # no method changes the config
        return None
    from transformers import AutoConfig

    try:
        model_type = AutoConfig.from_pretrained(name, revision=revision).model_type
    except (OSError, ValueError):
        return None  # load_masked_lm reports the unloadable model in its own words
    return plan.config_overrides(model_type)


def run(recipe: Recipe) -> Path:
    """Trains with bias evaluation; returns the output folder."""
    from transformers import set_seed
    from transformers.utils import logging as hf_logging

    from cdsbias.train.data import build_training_data, load_documents
    from cdsbias.train.output_folder import (
        DiscardReplacedRun,
        check_output_dir,
        replacing_run,
        resolve_resume,
    )
    from cdsbias.train.streaming import build_streaming_data, load_stream
    from cdsbias.train.tracking import configure_tracking

    training = recipe.training
    # The collator needs example_id (deterministic masking); it drops what the model can't take.
    training.remove_unused_columns = False
    if "average_tokens_across_devices" not in recipe.source:
        # With it on, transformers 5 multiplies the *evaluation* loss by the number of
        # processes under DDP, which would corrupt the held-out MLM loss curve.
        training.average_tokens_across_devices = False
    refuse_fsdp_without_accelerator(training)
    resume = resolve_resume(recipe)
    replace = check_output_dir(
        training.output_dir, overwrite=recipe.run.overwrite_output_dir, resume=resume
    )
    # Every input is read and checked before the output folder is touched (benchmark data,
    # corpus, model, method plan, word files, fit sentences, prefix lengths), so a bad
    # input fails with an earlier run intact, even with overwrite_output_dir=true.
    benchmarks = recipe.bias.build_benchmarks(recipe.axis)
    for benchmark in benchmarks:
        _ = benchmark.rows
    with training.main_process_first(desc="reading the corpus"):
        # Read once: tokenizer, data and card use it. A stream is only opened and checked.
        documents = (load_stream if recipe.data.streaming else load_documents)(recipe.data)
    hf_logging.set_verbosity_warning()
    set_seed(training.seed)

    plan = recipe.method
    model, tokenizer = build_model(recipe, resume, documents)
    if plan.reads_corpus:
        from cdsbias.scoring.encoding import input_limit

        limit = input_limit(plan.scoring_model(model), tokenizer)
        texts = corpus_texts(documents, recipe)

        def original() -> Any:
            """The run's original model, as a fresh run builds it (``model_name_or_path``)."""
            return build_model(recipe, None, documents)[0]

        # A resumed run whose model was loaded from its checkpoint: a method that compares
        # with the original model (Context-Debias's frozen copy) loads it again.
        again = resume is not None and plan.weights.resumes_from_weights
        notes = plan.prepare_data(
            texts(), tokenizer, model, max_length=limit, original=original if again else None
        )
        for note in notes:
            main_print(note)
    method = plan.summary(model, tokenizer)
    main_print(summary_line(method))
    check_scoring_inputs(recipe, benchmarks, model, tokenizer)
    with training.main_process_first(desc="preparing the corpus"):
        if recipe.data.streaming:
            data = build_streaming_data(
                recipe.data, recipe.cds, tokenizer, seed=training.seed, stream=documents,
                axis=recipe.axis.bias_axis,
            )  # fmt: skip
        else:
            data = build_training_data(
                recipe.data, recipe.cds, tokenizer, seed=training.seed, documents=documents,
                axis=recipe.axis.bias_axis,
            )  # fmt: skip

    # An earlier run in output_dir is set aside now, deleted at the first checkpoint, and
    # put back if the run fails before it (train/output_folder.py).
    with replacing_run(training.output_dir, replace) as replaced:
        wandb_mode = configure_tracking(training.report_to, training.output_dir)
        return write_run(
            recipe, benchmarks=benchmarks, documents=documents, model=model,
            tokenizer=tokenizer, method=method, data=data, resume=resume,
            extra_callbacks=[DiscardReplacedRun(replaced)], wandb_mode=wandb_mode,
        )  # fmt: skip


def write_run(
    recipe: Recipe, *, benchmarks: list[Any], documents: Any, model: Any, tokenizer: Any,
    method: dict[str, Any], data: Any, resume: str | None, extra_callbacks: list[Any],
    wandb_mode: str | None,
) -> Path:  # fmt: skip
    """Writes the run into its output folder, once every input was checked: the effective
    recipe and run info, the step-0 point, training with its checkpoints and points, the
    post-hoc step, the final model; returns the folder."""
    from cdsbias.data.corpora import describe_corpus
    from cdsbias.runs.folder import build_run_info
    from cdsbias.train.callback import BiasEvalCallback
    from cdsbias.train.data import EpochCallback, MLMCollator
    from cdsbias.train.method_files import MethodFilesCallback
    from cdsbias.train.tracking import RecipeLogCallback
    from cdsbias.train.trainer import DebiasTrainer

    training, plan = recipe.training, recipe.method
    folder = RunFolder(training.output_dir)
    effective = recipe.effective()
    if is_main_process():
        folder.path.mkdir(parents=True, exist_ok=True)
        n_examples = None if recipe.data.streaming else len(data.train)  # a stream: unknown
        effective.update(n_documents=data.n_documents, n_counterfactual=data.n_counterfactual,
                         n_train_examples=n_examples)  # fmt: skip
        recipe_text = folder.write_recipe(effective)
        corpus = describe_corpus(recipe.data, n_documents=data.n_documents)
        plain = folder.recipe()
        folder.write_run_info(build_run_info(plain, corpus=corpus, method=method))
        main_print("cdsbias effective recipe:")
        main_print(recipe_text)

    bias = recipe.bias
    callback = BiasEvalCallback(
        benchmarks, tokenizer=tokenizer, output_dir=folder.path,
        batch_size=bias.bias_eval_batch_size, eval_at_start=bias.bias_eval_at_start,
        heldout_dataset=data.heldout, scoring_model=plan.scoring_model,
        wrap_scorer=plan.wrap_scorer, heldout_through_scorer=plan.changes_scoring,
    )  # fmt: skip
    collator = MLMCollator(tokenizer, recipe.data.mlm_probability, seed=training.seed)
    trainer = DebiasTrainer(
        plan=plan,
        model=model,
        args=training,
        data_collator=collator,
        train_dataset=data.train,
        processing_class=tokenizer,
        callbacks=[EpochCallback(collator), MethodFilesCallback(plan), *plan.callbacks(),
                   RecipeLogCallback(effective, method), *extra_callbacks],
    )  # fmt: skip
    callback.attach(trainer)
    if plan.posthoc_only:  # nothing trains: the model as loaded is the "before" point
        callback.evaluate(training, trainer.state, model)
    else:
        trainer.train(resume_from_checkpoint=resume)
    if plan.posthoc is not None:
        model = apply_posthoc(recipe, model, tokenizer, documents, folder, callback, trainer)
        trainer.model = model
        if is_main_process():
            method["costs"] = plan.costs(model, tokenizer)  # e.g. the fit's seconds
            info = folder.run_info()
            folder.write_run_info({**info, "method": method})
    trainer.save_model(str(folder.path))
    trainer.save_state()  # trainer_state.json: train_runtime and the log (cdsbias compare)
    if is_main_process():
        main_print(_before_after(folder.points()))
        main_print(f"bias curve:   {folder.curve_file}")
        main_print(f"bias metrics: {folder.metrics_file}")
        if wandb_mode == "offline":
            runs = sorted((folder.path / "wandb").glob("offline-run-*"))
            where = runs[-1] if runs else folder.path / "wandb"
            main_print(f"W&B ran offline: upload with `wandb sync {where}`")
    return folder.path


def check_scoring_inputs(recipe: Recipe, benchmarks: list[Any], model: Any, tokenizer: Any) -> None:
    """Checks, before the run writes anything, that every benchmark's options fit the
    model (:func:`cdsbias.benchmarks.check_scorer_options`: SEAT's layer) and, under a
    decoding rule, that the benchmarks' inputs fit the model as the post-hoc point's scorer
    (:meth:`MethodPlan.wrap_scorer`) will build them
    (:func:`cdsbias.benchmarks.long_rows.check_inputs_fit`: a Self-Debias prefix)."""
    from cdsbias.benchmarks import check_scorer_options
    from cdsbias.benchmarks.long_rows import check_inputs_fit

    scorer = plan_scorer(recipe, model, tokenizer)
    check_scorer_options(benchmarks, scorer)
    if recipe.method.changes_scoring:  # a decoding rule (Self-Debias)
        check_inputs_fit(benchmarks, recipe.method.wrap_scorer(scorer))


def plan_scorer(recipe: Recipe, model: Any, tokenizer: Any) -> Any:
    """A scorer of the model the run's methods score (:meth:`MethodPlan.scoring_model`),
    on the model's device, with the recipe's scoring batch size."""
    from cdsbias.scoring import MaskedLMScorer

    scored = recipe.method.scoring_model(model)
    return MaskedLMScorer(
        scored, tokenizer, batch_size=recipe.bias.bias_eval_batch_size,
        device=next(scored.parameters()).device,
    )  # fmt: skip


def corpus_texts(documents: Any, recipe: Recipe) -> Any:
    """A function returning a fresh iterable of the corpus's document texts (original
    text): the column of the documents in memory, or the stream's text column, read lazily."""
    if recipe.data.streaming:
        from cdsbias.train.streaming import text_column_of

        column = text_column_of(recipe.data)
        return lambda: (row[column] for row in documents)
    return lambda: iter(documents["text"])


def apply_posthoc(
    recipe: Recipe, model: Any, tokenizer: Any, documents: Any, folder: RunFolder,
    callback: Any, trainer: Any,
) -> Any:  # fmt: skip
    """The run's post-hoc method acts on the trained model (:meth:`MethodPlan.after_training`)
    and the result is scored as the run's last point (``posthoc: true`` in
    ``bias_metrics.jsonl``); returns the model to save."""
    from cdsbias.methods.base import PosthocContext
    from cdsbias.train.posthoc_fit import main_process_fit

    plan = recipe.method
    scorer = plan_scorer(recipe, model, tokenizer)
    texts, seed = corpus_texts(documents, recipe), recipe.training.seed
    main = is_main_process()
    fit = main_process_fit(scorer, texts, seed=seed, main=main)
    context = PosthocContext(
        documents=texts, tokenizer=tokenizer, scorer=scorer, folder=folder, fit=fit, seed=seed,
        main_process=main,
    )  # fmt: skip
    model = plan.after_training(model, context)
    callback.evaluate(recipe.training, trainer.state, model, posthoc=True)
    return model


def summary_line(summary: dict[str, Any]) -> str:
    """``trainable parameters: N of M (x.xx%) - LABEL``."""
    return (
        f"trainable parameters: {summary['trainable_parameters']:,} of "
        f"{summary['total_parameters']:,} ({100 * summary['trainable_share']:.2f}%) "
        f"- {summary['label']}"
    )


def _before_after(points: list[dict[str, Any]]) -> str:
    """Each benchmark's headline metrics and the held-out loss, first vs last point."""
    from cdsbias.benchmarks import format_value
    from cdsbias.runs.points import before_after

    if len(points) < 1:
        return "no bias evaluation was recorded"
    summary = before_after(points)
    last = f"step {summary['last_step']}" + (", post-hoc" if summary["last_posthoc"] else "")
    lines = [f"bias before (step {summary['first_step']}) and after ({last}):"]
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
