"""Benchmark-suite scoring speed and agreement: cdsbias vs naive per-sentence loops.

For ``abc``, ``crows_pairs`` and ``stereoset`` the baseline is an independent, reference-style
loop written from the published code: one forward pass per sentence or masked variant, the
full-vocabulary softmax at every position, nothing batched or shared:

* abc (GenDa Lens ``abc_utils.score_sent``): three unmasked passes per triple and
  ``CrossEntropyLoss`` against the reflexive tokens (``--abc-scoring pll``: one pass per
  masked token);
* crows_pairs (nyu-mll/crows-pairs ``metric.py``, ``mask_unigram``): one pass per unmodified
  token of each sentence;
* stereoset (bias-bench ``IntrasentenceLoader`` + ``StereoSetRunner``): one pass per word
  piece of each filler;
* crows_pairs with ``aul``/``aula`` (Kaneko & Bollegala's ``calculate_aul``): one unmasked
  pass per sentence (``--crows-scoring nangia,aul`` times both, one row each);
* seat (bias-bench ``SEATRunner._encode``): one encoder pass per sentence of each set, no
  padding; then the cosine associations. SEAT is timed on all rows of the tests it runs
  (the six gender tests), not a sample, since its statistics need whole sets.

Every other registered benchmark whose data is found under ``--data-dir`` is timed against
the same scorer with its batching switched off (:class:`NaiveScorer`: one forward pass per
request, vocabulary projection at every position); benchmarks that compute outside the
scorer's primitives keep those parts batched, so their ratio is a lower bound.

Both sides score the same random sample of rows of the same model in the same process;
the script prints rows/s for each, the ratio and the largest |difference| of the scores
(``scaled``: |difference| / max(1, |score|), since ABC's GenDa perplexities of a random model
reach the vocabulary size, where float32 noise is ~1e-2 in absolute terms). Below the rows
whose reference already runs one pass per sentence (SEAT, AUL, AULA) it prints the largest
ratio any batching can reach on this machine, measured in the same run (``scripts/_bound.py``),
and the verdict on the 10x target. Last, ``--several aul,aula`` times that list of scorings
in one ``evaluate`` against one ``evaluate`` per scoring (``scripts/_shared_passes.py``:
ratio, bound, and whether every metric matches).

Usage:
    python scripts/bench_suite.py                        # random 4 x 256 BERT, real vocab
    python scripts/bench_suite.py --layers 12 --hidden 768 --sample 30   # BERT-base sized
    python scripts/bench_suite.py --model DIR --benchmarks crows_pairs,stereoset
    python scripts/bench_suite.py --repeats 3       # shared machine: best of 3, alternating
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _bound import batching_bound
from _models import build_random_bert
from _shared_passes import compare_shared_passes

REPO = Path(__file__).resolve().parents[1]
SUITE = ("abc", "crows_pairs", "stereoset", "seat")
#: Words the built model's vocabulary gets on top of bert-base-uncased, so that GenDa Lens'
#: one-token swap works (bert-base-uncased splits "hendes").
EXTRA_TOKENS = ("hendes",)


# --------------------------------------------------------------------- naive reference loops
def _log_softmax(model: Any, ids: Sequence[int]) -> Any:
    """Full ``[len, vocab]`` log-softmax of one unpadded sequence: one forward pass."""
    import torch

    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([list(ids)])).logits[0]
    return torch.log_softmax(logits.float(), dim=-1)


def naive_abc(model: Any, tok: Any, rows: pd.DataFrame, scoring: str) -> dict[str, np.ndarray]:
    """GenDa Lens ``score_sent`` (scoring ``genda``) or a per-token PLL loop (``pll``)."""
    import torch

    pronouns = ["sin", "sit", "sine", "▁sin", "▁sit", "▁sine"]
    out: dict[str, list[float]] = {"score_reflexive": [], "score_male": [], "score_female": []}
    for row in rows.itertuples():
        if scoring == "genda":
            truth = tok(row.reflexive)["input_ids"]
            tokens = tok.convert_ids_to_tokens(truth)
            index = next(i for i, t in enumerate(tokens) if t in pronouns)
            labels = torch.tensor(truth)
            for column, word in (("score_reflexive", None), ("score_male", "hans"),
                                 ("score_female", "hendes")):  # fmt: skip
                variant = list(truth)
                if word:
                    variant[index] = tok.convert_tokens_to_ids(word)
                loss = -_log_softmax(model, variant).gather(1, labels[:, None]).mean()
                out[column].append(math.exp(loss.item()))
        else:
            for column, text in (("score_reflexive", row.reflexive),
                                 ("score_male", row.anti_male),
                                 ("score_female", row.anti_female)):  # fmt: skip
                ids = tok(text)["input_ids"]
                total = 0.0
                for p in range(1, len(ids) - 1):
                    masked = list(ids)
                    masked[p] = tok.mask_token_id
                    total += _log_softmax(model, masked)[p, ids[p]].item()
                out[column].append(math.exp(-total / (len(ids) - 2)))
    return {k: np.asarray(v) for k, v in out.items()}


def kaneko_aul(model: Any, tok: Any, sentence: str, attention: bool) -> float:
    """``calculate_aul`` of kanekomasahiro/evaluate_bias_in_mlm: one unmasked pass, tokens
    [1:-1]; for AULA weighted by the attention they receive (mean of layers, heads, queries)."""
    import torch

    ids = tok.encode(sentence, return_tensors="pt")
    with torch.inference_mode():
        output = model(ids, output_attentions=attention)
    log_probs = torch.log_softmax(output.logits[0].float(), dim=1)
    token = log_probs.gather(1, ids.view(-1, 1))[1:-1, 0]
    if attention:
        received = torch.mean(torch.cat(output.attentions, 0), 0).mean(0).mean(0)
        token = token * received[1:-1]
    return float(token.mean())


def naive_crows(model: Any, tok: Any, rows: pd.DataFrame, scoring: str) -> dict[str, np.ndarray]:
    """nyu-mll/crows-pairs ``mask_unigram`` (``nangia``), bias-bench's diff-span mean, or
    Kaneko & Bollegala's AUL/AULA."""
    if scoring in ("aul", "aula"):
        if scoring == "aula":  # SDPA returns no attention weights
            model.set_attn_implementation("eager")
        return {
            column: np.array([kaneko_aul(model, tok, s, scoring == "aula") for s in rows[text]])
            for column, text in (("sent_more_score", "sent_more"), ("sent_less_score", "sent_less"))
        }
    more_scores, less_scores = [], []
    for row in rows.itertuples():
        ids1 = tok.encode(row.sent_more)
        ids2 = tok.encode(row.sent_less)
        matcher = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
        template1, template2 = [], []
        for op in matcher.get_opcodes():
            if (op[0] == "equal") == (scoring == "nangia"):
                template1 += list(range(op[1], op[2]))
                template2 += list(range(op[3], op[4]))
        if scoring == "nangia":
            # metric.py: "skipping CLS and SEP tokens, they'll never be masked".
            template1, template2 = template1[1:-1], template2[1:-1]
        scores = []
        for ids, template in ((ids1, template1), (ids2, template2)):
            values = []
            for p in template:
                masked = list(ids)
                masked[p] = tok.mask_token_id
                values.append(_log_softmax(model, masked)[p, ids[p]].item())
            scores.append(sum(values) if scoring == "nangia" else float(np.mean(values)))
        more_scores.append(scores[0])
        less_scores.append(scores[1])
    return {"sent_more_score": np.asarray(more_scores), "sent_less_score": np.asarray(less_scores)}


def naive_stereoset(model: Any, tok: Any, rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """bias-bench intrasentence likelihood scoring: one pass per filler piece, mean prob."""
    import torch

    out: dict[str, list[float]] = {}
    for label in ("stereotype", "anti_stereotype", "unrelated"):
        scores = []
        for row in rows.itertuples():
            word = getattr(row, f"{label}_word")
            pieces = tok.encode(word, add_special_tokens=False)
            probs = []
            for idx in range(len(pieces)):
                insertion = tok.decode(pieces[:idx])
                text = row.context.replace("BLANK", f"{insertion}{tok.mask_token}")
                ids = tok.encode(text)
                first_mask = ids.index(tok.mask_token_id)
                log_probs = _log_softmax(model, ids)
                probs.append(torch.exp(log_probs[first_mask, pieces[idx]]).item())
            scores.append(float(np.mean(probs)))
        out[f"{label}_score"] = scores
    return {k: np.asarray(v) for k, v in out.items()}


def naive_seat(model: Any, tok: Any, rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """bias-bench ``_encode``: one encoder pass per sentence, last layer mean, L2-normalised;
    then each sentence's mean cosine to the two opposite sets of its test."""
    import torch

    vectors = []
    with torch.inference_mode():
        for sentence in rows["sentence"]:
            hidden = model.base_model(**tok(sentence, return_tensors="pt")).last_hidden_state
            vector = hidden.mean(dim=1).view(-1).double().numpy()
            vectors.append(vector / np.linalg.norm(vector))
    matrix = np.array(vectors)
    association = np.full(len(rows), np.nan)
    opposite = {"targ1": ("attr1", "attr2"), "targ2": ("attr1", "attr2"),
                "attr1": ("targ1", "targ2"), "attr2": ("targ1", "targ2")}  # fmt: skip
    tests, sets = rows["test"].to_numpy(), rows["set"].to_numpy()
    for index in range(len(rows)):
        one, two = (np.flatnonzero((tests == tests[index]) & (sets == o)) for o in
                    opposite[sets[index]])  # fmt: skip
        association[index] = (matrix[one] @ matrix[index]).mean() - (
            matrix[two] @ matrix[index]
        ).mean()
    return {"association": association}


# --------------------------------------------------------------- generic naive scorer
def naive_scorer_class() -> type:
    """:class:`MaskedLMScorer` with batching, deduplication and gathering switched off."""
    from cdsbias.scoring import MaskedLMScorer

    class NaiveScorer(MaskedLMScorer):
        """One forward pass per request, full vocabulary projection at every position."""

        def _log_softmax_at(
            self, inputs: Sequence[Sequence[int]], positions: Sequence[int]
        ) -> Iterator[tuple[list[list[int]], Any]]:
            for request, (ids, position) in enumerate(zip(inputs, positions, strict=True)):
                log_probs = _log_softmax(self.model, ids)
                self.sequences_run += 1
                yield [[request]], log_probs[position : position + 1]

    return NaiveScorer


# ------------------------------------------------------------------------------ driver
def max_deltas(ours: pd.DataFrame, theirs: dict[str, np.ndarray]) -> tuple[float, float]:
    """Largest |a - b| and |a - b| / max(1, |b|) over the compared score columns."""
    worst = worst_relative = 0.0
    for column, values in theirs.items():
        a = ours[column].to_numpy(dtype=np.float64)
        b = np.asarray(values, dtype=np.float64)
        keep = ~(np.isnan(a) & np.isnan(b))
        diff = np.abs(a - b)[keep]
        if diff.size:
            # A NaN on one side only is a disagreement.
            worst = max(worst, math.inf if np.isnan(diff).any() else float(diff.max()))
            # Relative to the value where it exceeds 1 (ABC perplexities reach ~vocab size),
            # absolute below (log-ratios near 0).
            scale = np.maximum(np.abs(b[keep]), 1.0)
            worst_relative = max(worst_relative, float(np.nanmax(diff / scale)))
    return worst, worst_relative


def added_numeric_columns(rows: pd.DataFrame, scored: pd.DataFrame) -> list[str]:
    return [
        c for c in scored.columns
        if c not in rows.columns and pd.api.types.is_float_dtype(scored[c])
    ]  # fmt: skip


def one_pass_texts(name: str, bench: Any, sample: pd.DataFrame) -> list[str] | None:
    """The sentences of a baseline that runs one forward pass per sentence (SEAT, AUL, AULA),
    for :func:`~_bound.batching_bound`; None for the others."""
    if name == "seat":
        return sample["sentence"].tolist()
    if name == "crows_pairs" and bench.options.scoring in ("aul", "aula"):
        return [*sample["sent_more"], *sample["sent_less"]]
    return None


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def baseline_for(
    name: str, bench: Any, sample: pd.DataFrame, model: Any, tokenizer: Any, args: Any
) -> tuple[Callable[[], Any], str]:
    """The naive side for ``name``: a reference-style loop, else the unbatched scorer."""
    if name == "abc":
        return (
            lambda: naive_abc(model, tokenizer, sample, args.abc_scoring),
            f"GenDa Lens loop ({args.abc_scoring})",
        )
    if name == "crows_pairs":
        scoring = bench.options.scoring
        loop = "calculate_aul" if scoring in ("aul", "aula") else "metric.py"
        return (
            lambda: naive_crows(model, tokenizer, sample, scoring),
            f"{loop} loop ({scoring})",
        )
    if name == "stereoset":
        return lambda: naive_stereoset(model, tokenizer, sample), "bias-bench loop"
    if name == "seat":
        return lambda: naive_seat(model, tokenizer, sample), "bias-bench _encode loop"
    naive = naive_scorer_class()(model, tokenizer, batch_size=1)
    return lambda: bench.score(naive, sample), "unbatched scorer"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="masked LM folder or hub id (default: a random BERT)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--benchmarks", help="comma-separated names (default: all with data)")
    parser.add_argument("--sample", type=int, default=60, help="rows per benchmark (both sides)")
    parser.add_argument(
        "--repeats", type=int, default=1, help="timings per side, alternating; best kept"
    )
    parser.add_argument("--abc-scoring", choices=["genda", "pll"], default="genda")
    parser.add_argument(
        "--crows-scoring",
        default="nangia,aul",
        help="comma-separated CrowS-Pairs scorings, one row each (nangia, bias_bench, aul, aula)",
    )
    parser.add_argument("--several", default="aul,aula", help="scorings in one evaluate")
    parser.add_argument("--several-sample", type=int, default=200, help="rows for --several")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from cdsbias.benchmarks import get_benchmark, list_benchmarks
    from cdsbias.errors import CdsbiasError
    from cdsbias.scoring import MaskedLMScorer

    hf_logging.set_verbosity_error()
    # Speed is measured here, not fitness: language and data warnings would only clutter.
    warnings.simplefilter("ignore")
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.model or str(
            build_random_bert(args.layers, args.hidden, Path(tmp) / "m", EXTRA_TOKENS)
        )
        model = AutoModelForMaskedLM.from_pretrained(folder).eval()
        tokenizer = AutoTokenizer.from_pretrained(folder)
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    print(
        f"model: {args.model or f'random BERT {args.layers} x {args.hidden}'} "
        f"({n_params:.0f}M parameters, vocab {len(tokenizer)}), torch threads "
        f"{torch.get_num_threads()}, sample {args.sample} rows per benchmark"
    )
    _log_softmax(model, tokenizer("warm up")["input_ids"])

    names = args.benchmarks.split(",") if args.benchmarks else list(list_benchmarks())
    runs: list[tuple[str, dict[str, Any]]] = []
    for name in (n.strip() for n in names):
        if name == "crows_pairs":
            runs += [(name, {"scoring": s.strip()}) for s in args.crows_scoring.split(",")]
        else:
            runs.append((name, {"scoring": args.abc_scoring} if name == "abc" else {}))
    header = f"{'benchmark':<13} {'rows':>5} {'cdsbias rows/s':>15} {'naive rows/s':>13} "
    print(header + f"{'ratio':>7} {'max |delta|':>12} {'scaled':>9}  baseline")
    for name, options in runs:
        try:
            cls = get_benchmark(name)
            bench = cls(data_dir=args.data_dir, **options)
            rows = bench.load()
        except (CdsbiasError, TypeError) as exc:
            print(f"{name:<13} skipped: {exc}")
            continue
        if name == "seat":  # whole tests: a sample would break the sets apart
            sample = rows
        else:
            sample = rows.sample(n=min(args.sample, len(rows)), random_state=args.seed)
            sample = sample.sort_index()
        scorer = MaskedLMScorer(model, tokenizer, batch_size=args.batch_size)
        try:
            ours, _ = timed(lambda: bench.score(scorer, sample))  # noqa: B023
        except CdsbiasError as exc:
            print(f"{name:<13} skipped: {exc}")
            continue
        naive_fn, kind = baseline_for(name, bench, sample, model, tokenizer, args)
        # Alternate the two sides and keep each side's best time: on a shared machine a
        # burst of load during one side would otherwise decide the ratio.
        ours_seconds = naive_seconds = math.inf
        for repeat in range(args.repeats):
            sides = ["ours", "naive"] if repeat % 2 == 0 else ["naive", "ours"]
            for side in sides:
                if side == "ours":
                    ours, seconds = timed(lambda: bench.score(scorer, sample))  # noqa: B023
                    ours_seconds = min(ours_seconds, seconds)
                else:
                    theirs, seconds = timed(naive_fn)
                    naive_seconds = min(naive_seconds, seconds)
        if kind == "unbatched scorer":
            theirs = {c: theirs[c].to_numpy() for c in added_numeric_columns(sample, ours)}
        ours_rate = len(sample) / ours_seconds
        naive_rate = len(sample) / naive_seconds
        delta, relative = max_deltas(ours, theirs)
        print(
            f"{name:<13} {len(sample):>5} {ours_rate:>15.1f} {naive_rate:>13.1f} "
            f"{ours_rate / naive_rate:>6.1f}x {delta:>12.2e} {relative:>9.1e}  {kind}"
        )
        texts = one_pass_texts(name, bench, sample)
        if texts is not None:
            # The loop already runs one pass per sentence: only batching is left to gain.
            bound = batching_bound(naive_fn, naive_seconds, len(texts) / len(set(texts)))
            print("\n".join(f"{'':<13} {line}" for line in bound.lines(ours_rate / naive_rate, 10)))
    if "crows_pairs" in names and args.several:
        scorer = MaskedLMScorer(model, tokenizer, batch_size=args.batch_size)
        several = [s.strip() for s in args.several.split(",")]
        lines = compare_shared_passes(get_benchmark("crows_pairs"), scorer, several, args,
                                      data_dir=args.data_dir)  # fmt: skip
        print("\n".join(lines))


if __name__ == "__main__":
    main()
