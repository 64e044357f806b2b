"""Overhead of ``cdsbias downstream``'s fine-tuning against a plain ``Trainer`` fine-tuning.

Both fine-tune the same saved BERT on the same tokenized examples with the same collator
(``DataCollatorWithPadding``: each batch padded to its longest input), batch size, steps and
seed in this process; the plain run is what a user writes by hand:
``AutoModelForSequenceClassification`` (pooler + classifier: the same two layers as
cdsbias's head) and ``Trainer.train`` + ``Trainer.predict``. The cdsbias run is
:func:`cdsbias.downstream.finetune.finetune_and_predict` (encoder copy, head, tokenization,
training, prediction) on a Bias-in-Bios-shaped task.

Usage:
    python scripts/bench_downstream.py                      # tiny random BERT, CPU
    python scripts/bench_downstream.py --hidden 256 --layers 4 --examples 4000

Prints training examples/s of both (``Trainer``'s ``train_samples_per_second``), the wall
time of each whole call, and the overhead in percent (target: at most 10%).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

WORDS = (
    "he", "she", "works", "as", "a", "nurse", "engineer", "teacher", "manager", "at",
    "the", "day", "had", "good", "wants", "to", "become", "doctor", "clerk", "judge",
)  # fmt: skip


def synthetic(n: int, seed: int = 0):
    """``n`` biographies of 8 to 60 words over three occupations and two genders."""
    import pandas as pd

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 60))]
        rows.append({"hard_text": " ".join(words), "profession": i % 3, "gender": (i // 3) % 2})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--examples", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-steps", type=int, default=32)
    args = parser.parse_args()
    os.environ.setdefault("WANDB_MODE", "disabled")

    import torch
    from _models import tiny_masked_lm
    from transformers import (
        AutoModelForSequenceClassification,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
        set_seed,
    )
    from transformers.utils import logging as hf_logging

    from cdsbias.downstream import get_task
    from cdsbias.downstream.finetune import FinetuneConfig, finetune_and_predict, tokenized
    from cdsbias.scoring.loading import load_masked_lm

    hf_logging.set_verbosity_error()
    with tempfile.TemporaryDirectory() as tmp:
        folder = tiny_masked_lm("bert", Path(tmp) / "bert", layers=args.layers,
                                hidden=args.hidden, heads=max(1, args.hidden // 64))  # fmt: skip
        task = get_task("bias_in_bios")()
        task.num_labels = 3
        splits = {"train": synthetic(args.examples), "test": synthetic(args.examples // 4, 1)}
        masked_lm, tokenizer = load_masked_lm(folder, progress=False)
        config = FinetuneConfig(batch_size=args.batch_size, max_steps=args.max_steps,
                                max_length=128)  # fmt: skip

        # The plain run: what a user writes with transformers alone.
        start = time.perf_counter()
        train = tokenized(splits["train"], task, tokenizer, 128)
        test = tokenized(splits["test"], task, tokenizer, 128)
        set_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=3)
        trainer = Trainer(
            model=model,
            args=TrainingArguments(
                output_dir=str(Path(tmp) / "plain"), learning_rate=2e-5,
                per_device_train_batch_size=args.batch_size,
                per_device_eval_batch_size=args.batch_size, max_steps=args.max_steps,
                seed=0, save_strategy="no", logging_strategy="no", report_to=[],
                disable_tqdm=True, dataloader_pin_memory=torch.cuda.is_available(),
            ),
            train_dataset=train,
            data_collator=DataCollatorWithPadding(tokenizer),
        )  # fmt: skip
        plain_rate = trainer.train().metrics["train_samples_per_second"]
        trainer.predict(test)
        plain_wall = time.perf_counter() - start

        start = time.perf_counter()
        result = finetune_and_predict(masked_lm, tokenizer, task, splits, seed=0, config=config)
        ours_wall = time.perf_counter() - start

    ours_rate = result.train_examples_per_second
    print(f"device: {'cuda' if torch.cuda.is_available() else 'cpu'}, "
          f"{torch.get_num_threads()} thread(s); BERT {args.layers} layers x {args.hidden}, "
          f"{args.max_steps} steps of {args.batch_size}")  # fmt: skip
    print(f"plain Trainer : {plain_rate:8.1f} training examples/s, whole call {plain_wall:.2f} s")
    print(f"cdsbias       : {ours_rate:8.1f} training examples/s, whole call {ours_wall:.2f} s")
    overhead = 1 - ours_rate / plain_rate
    wall = ours_wall / plain_wall - 1
    verdict = "within" if overhead <= 0.10 else "OVER"
    print(f"overhead: {100 * overhead:+.1f}% of training throughput ({verdict} the 10% target), "
          f"{100 * wall:+.1f}% of wall time")  # fmt: skip


if __name__ == "__main__":
    main()
