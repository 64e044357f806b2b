"""``train.py``: a training run, then its recipe's ``downstream_tasks``.

Downstream tasks sit above ``cdsbias.train`` (they fine-tune the models training makes), so
the run itself never calls them: this entry point checks the tasks (names, options,
data) before training starts, runs ``cdsbias.train.run``, then fine-tunes the base model and
the final model on each task into ``OUTPUT_DIR/downstream/<task>/`` — once, on the final
model only, not at every checkpoint, since each costs a fine-tuning per seed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.runs.downstream_results import BASE_ROLE, DOWNSTREAM_DIR, FINAL_ROLE


def planned_tasks(recipe: Any) -> list[tuple[str, dict[str, Any], Path | None]]:
    """``[(task, options, data_dir)]`` of the recipe, each task built (options checked) and
    its data read once, so that a bad task fails before training.

    Raises:
        CdsbiasError: An unknown task, option or value; a missing file or column.
    """
    from cdsbias.downstream import get_task

    if recipe.bias.downstream_tasks and recipe.bias.downstream_seeds < 1:
        raise CdsbiasError(
            f"downstream_seeds must be at least 1, got {recipe.bias.downstream_seeds}."
        )
    planned = []
    for name, spec in recipe.bias.downstream_tasks.items():
        options = dict(spec)
        data_dir = options.pop("data_dir", None)
        task = get_task(name)(
            options,
            Path(data_dir) if data_dir else None,
            data_option=f"downstream_tasks.{name}.data_dir",
        )
        task.load()
        planned.append((name, options, Path(data_dir) if data_dir else None))
    return planned


def run_planned(recipe: Any, planned: Sequence[tuple[str, dict[str, Any], Path | None]]) -> None:
    """Fine-tunes the base and the final model on each planned task."""
    from cdsbias.downstream.runner import format_summary, run_downstream
    from cdsbias.train.run import main_print

    final = str(recipe.training.output_dir)
    # A model trained from scratch has no base to compare with (the name only sized it).
    base = None if recipe.model.init_from_scratch else recipe.model.model_name_or_path
    models = [base, final] if base else [final]
    roles = {final: FINAL_ROLE, **({base: BASE_ROLE} if base else {})}
    for name, options, data_dir in planned:
        summary = run_downstream(
            models, name, Path(final) / DOWNSTREAM_DIR,
            seeds=tuple(range(recipe.bias.downstream_seeds)), options=options,
            data_dir=data_dir, roles=roles,
        )  # fmt: skip
        main_print(format_summary(summary))


def main(argv: Sequence[str] | None = None) -> int:
    """``train.py RECIPE [key=value ...]``: train, then the recipe's downstream tasks."""
    from cdsbias.train.config import load_recipe
    from cdsbias.train.run import main as train_main

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("recipe", nargs="?")
    parser.add_argument("overrides", nargs="*")
    args, _ = parser.parse_known_args(argv if argv is not None else sys.argv[1:])
    planned: list[tuple[str, dict[str, Any], Path | None]] = []
    recipe = None
    if args.recipe is not None:
        try:
            recipe = load_recipe(args.recipe, args.overrides)
            planned = planned_tasks(recipe)
        except CdsbiasError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    code = train_main(argv)
    if code != 0 or not planned or recipe is None:
        return code
    try:
        run_planned(recipe, planned)
    except CdsbiasError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
