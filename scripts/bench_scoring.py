"""BEC-Pro scoring speed: cdsbias vs the per-sentence fill-mask pipeline, same model, same process.

The baseline is how BEC-Pro is usually scored with ``transformers``: one
``pipeline("fill-mask", targets=[person])`` call for ``Sent_TM`` and one for ``Sent_TAM``
per row. cdsbias scores all 5,400 rows (deduplicated, length-sorted batches, vocabulary
projection at the masked positions only). The baseline runs on a random sample of rows
(``--baseline-rows``) and its rows/s is extrapolated; both are compared on that sample.

Usage:
    python scripts/bench_scoring.py                 # bert-base-sized random model (12 x 768)
    python scripts/bench_scoring.py --model DIR     # any local or hub masked LM
    python scripts/bench_scoring.py --layers 2 --hidden 128 --baseline-rows 100   # quick

Prints rows/s for both, the speed ratio and max |delta association| on the sample.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from _models import bench_setup, load_bench_model


def pipeline_associations(fill, rows) -> np.ndarray:
    """The naive baseline: two fill-mask pipeline calls per row."""
    out = []
    for row in rows.itertuples():
        p_tm = fill(row.Sent_TM, targets=[row.Person])[0]["score"]
        tam = fill(row.Sent_TAM, targets=[row.Person])
        p_tam = (tam[0] if isinstance(tam[0], list) else tam)[0]["score"]  # first mask: person
        out.append(math.log(p_tm / p_tam))
    return np.asarray(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="masked LM folder or hub id (default: random BERT-base)")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--baseline-rows", type=int, default=300, help="rows timed for baseline")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    bench_setup(args.threads)
    import torch
    from transformers import pipeline

    from cdsbias.benchmarks.becpro import BecPro
    from cdsbias.benchmarks.becpro_data import generate_english
    from cdsbias.scoring import MaskedLMScorer

    model, tokenizer = load_bench_model(args.model, args.layers, args.hidden)

    rows = generate_english()
    sample = rows.sample(n=min(args.baseline_rows, len(rows)), random_state=args.seed)
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    shown = args.model or f"random BERT {args.layers}x{args.hidden}"
    print(f"model: {shown} ({n_params:.0f}M parameters), torch threads {torch.get_num_threads()}")

    fill = pipeline("fill-mask", model=model, tokenizer=tokenizer, device="cpu", top_k=1)
    fill("[MASK] is a nurse.", targets=["he"])  # warm-up
    start = time.perf_counter()
    baseline = pipeline_associations(fill, sample)
    baseline_seconds = time.perf_counter() - start
    baseline_rate = len(sample) / baseline_seconds

    scorer = MaskedLMScorer(model, tokenizer, batch_size=args.batch_size)
    benchmark = BecPro()
    start = time.perf_counter()
    scored = benchmark.score(scorer, rows)
    ours_seconds = time.perf_counter() - start
    ours_rate = len(rows) / ours_seconds

    delta = np.abs(scored.loc[sample.index, "association"].to_numpy() - baseline)
    print(
        f"pipeline fill-mask : {len(sample):>5} rows in {baseline_seconds:7.2f} s = "
        f"{baseline_rate:8.1f} rows/s (all 5,400 rows: ~{len(rows) / baseline_rate:.0f} s)"
    )
    print(
        f"cdsbias            : {len(rows):>5} rows in {ours_seconds:7.2f} s = "
        f"{ours_rate:8.1f} rows/s ({scorer.sequences_run} forward sequences)"
    )
    print(f"speed ratio        : {ours_rate / baseline_rate:.1f}x")
    print(f"max |delta association| on the {len(sample)} sampled rows: {delta.max():.2e}")


if __name__ == "__main__":
    main()
