"""``cdsbias downstream MODEL [MODEL ...] --task TASK``: fine-tune, score utility and bias."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "downstream",
        help="fine-tune models on a downstream task; score utility and extrinsic bias",
        description="Fine-tunes each model's encoder under a classification head on TASK with "
        "one recipe and several seeds (transformers.Trainer; `accelerate launch -m cdsbias "
        "downstream ...` spreads it over devices), predicts the task's test split and writes "
        "OUT/<task>/rows.tsv (every test prediction), seeds.tsv (metrics per seed) and "
        "summary.json (metrics with 95% bootstrap intervals over test examples, seeds "
        "pooled). A model folder holding a post-hoc projection (posthoc_erasure.safetensors) "
        "runs twice: folded into the head before fine-tuning (fold) and kept as a frozen hook "
        "on the encoder (hook). See docs/downstream.md.",
    )
    parser.add_argument("models", nargs="+", metavar="MODEL", help="hub ids or model folders")
    parser.add_argument(
        "--task", required=True, help="a downstream task (docs/downstream.md lists them)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("downstream"),
        metavar="DIR",
        help="output folder; writes OUT/<task>/ (default: downstream)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an OUT/<task>/ an earlier run wrote (default: refuse, keeping it)",
    )
    parser.add_argument(
        "--seeds", type=int, default=3, metavar="N", help="fine-tuning seeds 0 .. N-1 (default 3)"
    )
    parser.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="local train and test files (.jsonl, .csv or .parquet) instead of "
        "the task's hub dataset",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a task option, e.g. max_train_examples=2000 or scrub=true (repeatable)",
    )
    parser.add_argument("--learning-rate", type=float, help="default: the task's (2e-5)")
    parser.add_argument("--epochs", type=float, help="default: the task's (3)")
    parser.add_argument("--batch-size", type=int, help="default: the task's (32)")
    parser.add_argument("--max-length", type=int, help="default: the task's (128)")
    parser.add_argument(
        "--max-steps",
        type=int,
        default=-1,
        help="stop each fine-tuning after N steps (smoke tests)",
    )
    parser.set_defaults(func=run_downstream_command)


def run_downstream_command(args: argparse.Namespace) -> int:
    from cdsbias.downstream import get_task
    from cdsbias.downstream.finetune import FinetuneConfig
    from cdsbias.downstream.runner import SUMMARY_FILE, format_summary, run_downstream
    from cdsbias.errors import CdsbiasError
    from cdsbias.io import check_output
    from cdsbias.options import parse_key_values
    from cdsbias.train.run import is_main_process

    if args.seeds < 1:
        raise CdsbiasError(f"--seeds must be at least 1, got {args.seeds}.")
    task = get_task(args.task).name  # an unknown name: did-you-mean, before the paths
    check_output(args.out, flag="--out", folder=True, overwrite=True)
    check_output(args.out / task, flag="--out", overwrite=args.overwrite)
    config = FinetuneConfig(
        learning_rate=args.learning_rate,
        epochs=args.epochs,
        batch_size=args.batch_size,
        max_length=args.max_length,
        max_steps=args.max_steps,
    )
    summary = run_downstream(
        args.models,
        args.task,
        args.out,
        seeds=tuple(range(args.seeds)),
        options=parse_key_values(args.option, "--option"),
        data_dir=args.data,
        config=config,
    )
    if is_main_process():  # under accelerate launch, one process reports
        print(format_summary(summary), end="")
        print(f"wrote {args.out / summary['task'] / SUMMARY_FILE}")
    return 0
