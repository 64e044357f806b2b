"""Which benchmark row is too long for the model: the error every benchmark gives.

The scorer sees token ids, not rows, so its :class:`~cdsbias.errors.InputTooLongError`
cannot say which row of a benchmark's data is at fault. :func:`score_naming_long_rows` is
:meth:`Benchmark.score <cdsbias.benchmarks.base.Benchmark.score>` that, on that error,
finds the row by halving and names it, its longest text and the model's limit.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from cdsbias.errors import CdsbiasError, InputTooLongError

if TYPE_CHECKING:
    import pandas as pd

    from cdsbias.scoring import MaskedLMScorer


def score_naming_long_rows(
    benchmark: Any, scorer: MaskedLMScorer, positions: list[int]
) -> pd.DataFrame:
    """``benchmark.score`` of the rows at ``positions``; an input longer than the model
    accepts is an error naming the benchmark and its row. The scorer sees token ids, not
    rows: the row is found by halving (score the first half, keep the half that fails), at
    most about one more pass over the rows, on the error path only."""
    try:
        return benchmark.score(scorer, benchmark.rows.iloc[positions])
    except InputTooLongError as error:
        first_error = error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the data's own warnings were shown once already
        while len(positions) > 1:
            half = positions[: len(positions) // 2]
            try:
                benchmark.score(scorer, benchmark.rows.iloc[half])
            except InputTooLongError:
                positions = half
            else:
                positions = positions[len(positions) // 2 :]
        try:
            benchmark.score(scorer, benchmark.rows.iloc[positions])
        except InputTooLongError as error:
            raise long_row_error(benchmark, scorer, positions[0], error) from None
    # Only rows together are too long (none alone): the scorer's own message.
    raise CdsbiasError(f"{benchmark.name}: {first_error}") from None


def long_row_error(
    benchmark: Any, scorer: MaskedLMScorer, position: int, error: InputTooLongError
) -> CdsbiasError:
    """The error naming the row at ``position`` and its longest text (in tokens)."""
    from cdsbias.scoring.encoding import shorten  # the scorer imports numpy: error path only

    rows = benchmark.rows
    row = rows.iloc[position]
    texts = {k: v for k, v in row.items() if isinstance(v, str)}
    longest = max(texts, key=lambda k: len(scorer.encode(texts[k]))) if texts else None
    shown = f" ({longest} {shorten(texts[longest])})" if longest is not None else ""
    return CdsbiasError(
        f"{benchmark.name}: row {position + 1} of {len(rows)}{shown} is {error.n_tokens} "
        f"tokens long (special tokens included); the model accepts {error.max_length} at "
        "most. Remove or shorten that row, or use a model with more positions."
    )
