"""Training-time overhead of BiasEvalCallback: recipe with the callback vs a plain Trainer.

Both runs use the same model, data, collator and number of steps in this process. The
callback scores BEC-Pro and the held-out loss at step 0 and at every save
(``save_steps``, 500 in recipes/gap_cds.yaml: the default evaluation frequency); the plain
run saves nothing and evaluates nothing.

Usage:
    python scripts/bench_train.py --data-dir ../shared/data
    python scripts/bench_train.py --data-dir ../shared/data --hidden 256 --layers 4 \\
        --max-steps 500 --save-steps 500

Prints the wall time and steps/s of both and the overhead in percent of training time.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-steps", type=int, default=500)
    parser.add_argument("--save-steps", type=int, default=500, help="evaluation frequency")
    parser.add_argument("--documents", type=int, default=2000)
    args = parser.parse_args()
    os.environ.setdefault("WANDB_MODE", "disabled")

    from transformers import Trainer
    from transformers.utils import logging as hf_logging

    from cdsbias.train.config import load_recipe
    from cdsbias.train.data import EpochCallback, MLMCollator, build_training_data
    from cdsbias.train.run import build_model, run

    hf_logging.set_verbosity_error()
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        overrides = [
            f"data_dir={args.data_dir}", f"bias_data_dir={args.data_dir}",
            f"max_steps={args.max_steps}", f"save_steps={args.save_steps}",
            f"per_device_train_batch_size={args.batch_size}", f"max_documents={args.documents}",
            f"model_config={{hidden_size: {args.hidden}, num_hidden_layers: {args.layers}, "
            f"num_attention_heads: {max(1, args.hidden // 64)}, "
            f"intermediate_size: {4 * args.hidden}}}",
            "tokenizer_vocab_size=8000", "max_seq_length=128", "report_to=none",
            "logging_steps=1000", "bias_n_resamples=2000", "disable_tqdm=true",
        ]  # fmt: skip

        recipe = load_recipe(
            repo / "recipes" / "smoke.yaml", [*overrides, f"output_dir={tmp}/plain"]
        )
        recipe.training.save_strategy = "no"
        recipe.training.remove_unused_columns = False
        model, tokenizer = build_model(recipe)
        data = build_training_data(recipe.data, recipe.cds, tokenizer, seed=recipe.training.seed)
        collator = MLMCollator(tokenizer, recipe.data.mlm_probability, seed=recipe.training.seed)
        plain = Trainer(model=model, args=recipe.training, data_collator=collator,
                        train_dataset=data.train, callbacks=[EpochCallback(collator)])  # fmt: skip
        start = time.perf_counter()
        plain.train()
        plain_seconds = time.perf_counter() - start

        recipe = load_recipe(repo / "recipes" / "smoke.yaml", [*overrides, f"output_dir={tmp}/cb"])
        start = time.perf_counter()
        run(recipe)
        callback_seconds = time.perf_counter() - start
        # run() also prepares data and the model; time that part alone to subtract it.
        start = time.perf_counter()
        model, tokenizer = build_model(recipe)
        build_training_data(recipe.data, recipe.cds, tokenizer, seed=recipe.training.seed)
        setup_seconds = time.perf_counter() - start
        callback_train = callback_seconds - setup_seconds

    evaluations = 1 + args.max_steps // args.save_steps
    print(
        f"model: BERT {args.layers} x {args.hidden}, batch {args.batch_size}, "
        f"{args.max_steps} steps, {evaluations} bias evaluations (save_steps {args.save_steps})"
    )
    plain_rate = args.max_steps / plain_seconds
    print(f"plain Trainer       : {plain_seconds:8.1f} s = {plain_rate:6.2f} steps/s")
    print(
        f"with BiasEvalCallback: {callback_train:8.1f} s = {args.max_steps / callback_train:6.2f} "
        "steps/s (incl. checkpoint saving)"
    )
    print(
        f"overhead: {100 * (callback_train - plain_seconds) / plain_seconds:+.1f}% of training time"
    )


if __name__ == "__main__":
    main()
