"""A cell's process: ``train.py RECIPE [key=value ...]``, or with ``--base`` the base model
scored as a run that trains nothing.

``python -m cdsbias.studies.launch RECIPE key=value ...`` is ``train.py`` itself
(:func:`cdsbias.downstream.after_training.main`), so a method cell is an ordinary run.
With ``--base`` the recipe is loaded and checked as ``train.py`` does, then run with
nothing to train: the run folder gets the model as loaded, scored once (step 0: every
benchmark and the held-out loss), under the same run-folder contract.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence

from cdsbias.errors import CdsbiasError


def score_base(argv: Sequence[str]) -> int:
    """Scores the recipe's model as loaded into the recipe's ``output_dir``."""
    from cdsbias.train.config import load_recipe
    from cdsbias.train.run import run

    recipe_path, *overrides = argv
    try:
        recipe = load_recipe(recipe_path, overrides)
        # The plan's "train nothing, score the model as loaded" path, with no post-hoc step.
        recipe.method = dataclasses.replace(recipe.method, posthoc_only=True)
        run(recipe)
    except CdsbiasError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--base"]:
        return score_base(argv[1:])
    from cdsbias.downstream.after_training import main as train_main

    return train_main(argv)


if __name__ == "__main__":
    sys.exit(main())
