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


def check_inputs_fit(benchmarks: list[Any], scorer: MaskedLMScorer) -> None:
    """Refuses, before anything is scored or written, a Self-Debias prefix that makes the
    benchmarks' inputs longer than the model takes.

    Self-Debias (``scorer.self_debias``) runs every input a second time with its prefix
    inserted after the first special token (:mod:`cdsbias.scoring.self_debias`), so the
    longest input grows by the prefix's pieces. Checked here, with the model's tokenizer:

    * the prefix with the model's special tokens alone (exact: no input is shorter);
    * each benchmark's longest row text (every text cell of its rows, special tokens
      included, placeholders as masks) plus the prefix — the text a benchmark builds its
      inputs from, an estimate of its longest input within a few pieces.

    A scorer without Self-Debias (or with an empty prefix or λ = 0) is never refused.

    Raises:
        CdsbiasError: One line naming the benchmark (or the prefix alone), the lengths, the
            model's limit and the fix: a shorter prefix or a model with more positions.
    """
    settings = getattr(scorer, "self_debias", None)
    limit = scorer.max_length
    if settings is None or settings.is_identity or limit is None:
        return
    tokenizer = scorer.tokenizer
    frame = scorer.encode("")  # the special tokens every input carries
    first = frame[0] if frame and frame[0] in set(tokenizer.all_special_ids) else None
    extra = len(settings.prefix_ids(tokenizer, first))
    fix = (
        "use a shorter prefix (self_debias_prefix in a recipe, --self-debias PREFIX for "
        "cdsbias evaluate) or a model with more positions (max_position_embeddings)"
    )
    what = f"The Self-Debias prefix is {extra} tokens"
    if extra + len(frame) > limit:
        raise CdsbiasError(
            f"{what}; with the model's {len(frame)} special tokens that is "
            f"{extra + len(frame)}, but the model accepts {limit} at most: {fix}."
        )
    for benchmark in benchmarks:
        rows = benchmark.rows
        texts = {
            value for column in rows.columns for value in rows[column] if isinstance(value, str)
        }
        if not texts:
            continue
        # A token spans at least one byte of its text (SentencePiece may add one word
        # marker in front): a text of at most limit - prefix - special tokens - 1 bytes
        # fits for sure and is never tokenized (with 512 positions, nearly every text), so
        # only the texts that may not fit are encoded, and the longest of them is reported.
        room = limit - extra - len(frame) - 1
        maybe = [text for text in texts if len(text.encode("utf-8")) > room]
        if not maybe:
            continue
        length, longest = max((len(scorer.encode(text)), text) for text in maybe)
        if length + extra > limit:
            from cdsbias.scoring.encoding import shorten  # numpy via the scorer: error path

            raise CdsbiasError(
                f"{benchmark.name}: {what}, and its longest text {shorten(longest)} is "
                f"{length} (special tokens included): {length + extra} with the prefix, but "
                f"the model accepts {limit} at most; {fix}."
            )
