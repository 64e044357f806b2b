"""One ``evaluate`` with several scorings against one ``evaluate`` per scoring, in one process.

With ``scoring: [aul, aula]`` AUL comes out of AULA's pass (the attention weights come with
the logits) and the sentences are tokenized once, so the list runs one unmasked pass per
sentence where the separate runs run two: AUL's (the model's own attention kernel) and
AULA's (eager attention returning the weights). The list still does all of AULA's run, so
no implementation can beat::

    bound = (t_aul + t_aula) / t_aula        (2x when both passes cost the same)

(with masked scorings in the list, their runs are added to both sides: they share only the
tokenization).
with both times measured here, on the same rows, model and scorer. Each scoring's metrics
from the list are checked against its own run.
"""

from __future__ import annotations

import math
import time
from typing import Any


def compare_shared_passes(
    cls: type, scorer: Any, scorings: list[str], args: Any, **options: Any
) -> list[str]:
    """Times ``scorings`` in one evaluate and each alone on ``args.several_sample`` rows
    (alternating, best of ``args.repeats``); returns the lines to print."""
    rows = cls(**options).load()
    rows = rows.sample(n=min(args.several_sample, len(rows)), random_state=args.seed)
    rows = rows.sort_index()
    repeats = args.repeats

    def evaluate(scoring: Any) -> tuple[Any, float]:
        bench = cls(scoring=scoring, **options)
        bench._rows = rows  # the sampled rows, as the other side scores them
        start = time.perf_counter()
        result = bench.evaluate(scorer)
        return result, time.perf_counter() - start

    evaluate(scorings)  # warm-up: first-call costs (eager switch, allocator) on neither side
    alone_seconds = dict.fromkeys(scorings, math.inf)
    together_seconds = math.inf
    alone: dict[str, Any] = {}
    for repeat in range(repeats):
        order = ["list", "separate"] if repeat % 2 == 0 else ["separate", "list"]
        for side in order:
            if side == "list":
                together, seconds = evaluate(scorings)
                together_seconds = min(together_seconds, seconds)
            else:
                for scoring in scorings:
                    alone[scoring], seconds = evaluate(scoring)
                    alone_seconds[scoring] = min(alone_seconds[scoring], seconds)
    same = all(
        together.metrics[f"{scoring}/{key}"] == value
        or (math.isnan(value) and math.isnan(together.metrics[f"{scoring}/{key}"]))
        for scoring, result in alone.items()
        for key, value in result.metrics.items()
    )
    from cdsbias.scoring.unmasked import UNMASKED_SCORINGS

    separate = sum(alone_seconds.values())
    # The list does at least each masked scoring's run and the unmasked pass it keeps:
    # AULA's where AULA is asked for (AUL comes with it).
    unmasked = [alone_seconds[s] for s in scorings if s in UNMASKED_SCORINGS]
    kept = alone_seconds["aula"] if "aula" in scorings else max(unmasked, default=0.0)
    floor = separate - sum(unmasked) + kept
    parts = " + ".join(f"{s} {alone_seconds[s]:.2f}s" for s in scorings)
    return [
        f"{cls.name} scoring=[{','.join(scorings)}], {len(rows)} rows: one evaluate "
        f"{together_seconds:.2f}s; separate evaluates {separate:.2f}s ({parts})",
        f"ratio {separate / together_seconds:.2f}x; bound {separate / floor:.2f}x (the list "
        "does all of its masked scorings' runs and AULA's); metrics identical "
        f"to the separate runs: {'yes' if same else 'NO'}",
    ]
