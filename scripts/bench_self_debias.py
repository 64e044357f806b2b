"""Self-Debias scoring cost on BEC-Pro: time as a ratio to plain scoring, same model, same process.

Both runs score all 5,400 BEC-Pro rows (``BecPro.score``: encoding, deduplicated,
length-sorted batches, chain rule) with the same model; the Self-Debias run
(``--self-debias`` of ``cdsbias evaluate``, bias-bench's gender prefix, λ = 50, ε = 0.01)
adds a prefixed partner for every distinct input, so the encoder runs ``2 + k / L`` times
the plain run's tokens for a k-token prefix and inputs of mean length L: short benchmark
sentences cost relatively more (the fixed costs of encoding and statistics do not grow).
Runs alternate (plain, debiased, plain, debiased, ...) and the best of ``--repeats`` is
kept, which keeps a busy machine's noise out of the ratio.

Usage:
    python scripts/bench_self_debias.py                 # bert-base-sized random model (12 x 768)
    python scripts/bench_self_debias.py --model DIR     # any local or hub masked LM
    python scripts/bench_self_debias.py --layers 2 --hidden 128   # quick

Prints seconds for both, the ratio (target <= 2.3x), forward passes and extra input tokens
per prediction, and the mean input length of both passes.
"""

from __future__ import annotations

import argparse
import time

from _models import bench_setup, load_bench_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="masked LM folder or hub id (default: random BERT-base)")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2, help="runs of each mode; best kept")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    args = parser.parse_args()

    bench_setup(args.threads)
    import torch

    from cdsbias.benchmarks.becpro import BecPro
    from cdsbias.benchmarks.becpro_data import generate_english
    from cdsbias.scoring import MaskedLMScorer
    from cdsbias.scoring.self_debias import SelfDebias

    model, tokenizer = load_bench_model(args.model, args.layers, args.hidden)
    rows = generate_english()
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    shown = args.model or f"random BERT {args.layers}x{args.hidden}"
    print(f"model: {shown} ({n_params:.0f}M parameters), torch threads {torch.get_num_threads()}")

    settings = SelfDebias()
    best: dict[str, float] = {}
    runs: dict[str, MaskedLMScorer] = {}
    for _ in range(args.repeats):
        for mode, debias in (("plain", None), ("self-debias", settings)):
            scorer = MaskedLMScorer(
                model, tokenizer, batch_size=args.batch_size, self_debias=debias
            )
            start = time.perf_counter()
            BecPro().score(scorer, rows)
            seconds = time.perf_counter() - start
            best[mode] = min(best.get(mode, seconds), seconds)
            runs[mode] = scorer

    cost = settings.inference_cost(tokenizer, tokenizer.cls_token_id or tokenizer.bos_token_id)
    plain_inputs = runs["plain"].sequences_run
    debiased_inputs = runs["self-debias"].sequences_run
    texts = [*rows["Sent_TM"].unique(), *rows["Sent_TAM"].unique()]
    mean_length = sum(len(tokenizer(t)["input_ids"]) for t in texts) / len(texts)
    print(
        f"plain       : {len(rows)} rows in {best['plain']:7.2f} s "
        f"({plain_inputs} forward sequences)"
    )
    print(
        f"self-debias : {len(rows)} rows in {best['self-debias']:7.2f} s "
        f"({debiased_inputs} forward sequences)"
    )
    print(f"time ratio  : {best['self-debias'] / best['plain']:.2f}x (target <= 2.3x)")
    extra = cost["extra_tokens"]
    print(
        f"per prediction: {cost['forward_passes']} forward passes "
        f"({debiased_inputs / plain_inputs:.0f}x the sequences), {extra} extra input tokens "
        f"(the prefix); plain inputs average {mean_length:.1f} tokens, so the encoder runs "
        f"{2 + extra / mean_length:.2f}x the plain run's tokens"
    )


if __name__ == "__main__":
    main()
