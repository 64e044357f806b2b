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
per prediction, and, counted in the same runs, the ratio of encoder tokens and of
matrix-product FLOPs of the two modes' forward passes, and the lowest ratio any
implementation of a second, prefixed pass allows: the plain run's time plus the prefixed
pass's linear-layer products at the best GEMM rate this machine reaches
(``scripts/_bound.py``). The time ratio can be below the FLOP ratio: the prefixed inputs are
longer, and longer inputs run the products at a higher rate.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from _bound import best_gemm_rate
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
    from cdsbias.scoring.self_debias import SelfDebias

    model, tokenizer = load_bench_model(args.model, args.layers, args.hidden)
    rows = generate_english()
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    shown = args.model or f"random BERT {args.layers}x{args.hidden}"
    print(f"model: {shown} ({n_params:.0f}M parameters), torch threads {torch.get_num_threads()}")

    settings = SelfDebias()
    scorer_class = counting_scorer_class()
    best: dict[str, float] = {}
    runs: dict[str, Any] = {}
    for _ in range(args.repeats):
        for mode, debias in (("plain", None), ("self-debias", settings)):
            scorer = scorer_class(model, tokenizer, batch_size=args.batch_size, self_debias=debias)
            start = time.perf_counter()
            BecPro().score(scorer, rows)
            seconds = time.perf_counter() - start
            if seconds < best.get(mode, float("inf")):
                best[mode], runs[mode] = seconds, scorer

    cost = settings.inference_cost(tokenizer, tokenizer.cls_token_id or tokenizer.bos_token_id)
    plain, debiased = runs["plain"], runs["self-debias"]
    for mode, scorer in runs.items():
        print(
            f"{mode:<12}: {len(rows)} rows in {best[mode]:7.2f} s ({scorer.sequences_run} "
            f"forward sequences, {scorer.counts['tokens']} tokens)"
        )
    ratio = best["self-debias"] / best["plain"]
    print(f"time ratio  : {ratio:.2f}x (target <= 2.3x)")
    extra = cost["extra_tokens"]
    mean_length = plain.counts["tokens"] / plain.sequences_run
    tokens = debiased.counts["tokens"] / plain.counts["tokens"]
    work = forward_flops(model, debiased.counts) / forward_flops(model, plain.counts)
    print(
        f"per prediction: {cost['forward_passes']} forward passes, {extra} extra input tokens "
        f"(the prefix); plain inputs average {mean_length:.1f} tokens, so the encoder runs "
        f"{tokens:.2f}x the plain run's tokens (2 + {extra}/{mean_length:.1f}) and the forward "
        f"passes do {work:.2f}x its matrix-product FLOPs (padding, attention and vocabulary "
        "projection at the read rows included)"
    )
    # The lowest ratio a second, prefixed pass allows: the plain run as measured, plus the
    # prefixed pass's linear-layer products at the best rate this machine reaches for them.
    extra = {key: debiased.counts[key] - plain.counts[key] for key in plain.counts}
    bound = 1 + best_case_seconds(model, extra) / best["plain"]
    forward = plain.forward_seconds
    print(
        f"forward passes: {forward:.2f} s of the plain run ({forward / best['plain']:.0%}), "
        f"{debiased.forward_seconds:.2f} s of the Self-Debias run "
        f"({debiased.forward_seconds / forward:.2f}x; longer inputs run the products at a "
        f"higher rate); the decay itself "
        f"{best['self-debias'] - debiased.forward_seconds - (best['plain'] - forward):.2f} s"
    )
    print(
        f"bound: the prefixed pass's linear layers at this machine's best GEMM rate take "
        f"{bound - 1:.2f}x the plain run's time, so no implementation beats {bound:.2f}x"
    )
    if ratio <= 2.3:
        print("target <= 2.3x: met")
    elif bound > 2.3:
        print(
            f"target <= 2.3x: not reachable here: bound {bound:.2f}x (a second pass over "
            f"{tokens - 1:.2f}x the plain run's tokens)"
        )
    else:
        print(f"target <= 2.3x: not met ({ratio:.2f}x; bound {bound:.2f}x)")


def counting_scorer_class() -> type:
    """:class:`MaskedLMScorer` that counts what its forward passes run (real and padded
    tokens, ``batch x width^2`` attention entries, read rows) and the seconds they take."""
    from cdsbias.scoring import MaskedLMScorer

    class CountingScorer(MaskedLMScorer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.counts = dict.fromkeys(("tokens", "padded", "attention", "reads"), 0)
            self.forward_seconds = 0.0

        def _batch_log_softmax(self, sequences: Any, reads: Any) -> Any:
            width = max(len(sequence) for sequence in sequences)
            self.counts["tokens"] += sum(len(sequence) for sequence in sequences)
            self.counts["padded"] += len(sequences) * width
            self.counts["attention"] += len(sequences) * width * width
            self.counts["reads"] += sum(len(read) for read in reads)
            start = time.perf_counter()
            log_probs = super()._batch_log_softmax(sequences, reads)
            self.forward_seconds += time.perf_counter() - start
            return log_probs

    return CountingScorer


def best_case_seconds(model: Any, counts: dict[str, int]) -> float:
    """Seconds the linear layers of the counted forward passes take at the best GEMM rate
    this machine reaches for each weight shape (attention and element-wise work left out,
    so this is a lower bound)."""
    import torch

    encoder = {id(m) for m in model.base_model.modules()}
    seconds = 0.0
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            outer, inner = module.weight.shape
            rows = counts["padded"] if id(module) in encoder else counts["reads"]
            seconds += 2 * rows * inner * outer / best_gemm_rate(inner, outer)
    return seconds


def forward_flops(model: Any, counts: dict[str, int]) -> float:
    """Matrix-product FLOPs of the counted forward passes: the encoder's linear layers at
    every (padded) position, its attention products (``QK^T`` and ``AV``, 2 x 2 x width^2 x
    hidden a layer), and the head's linear layers at the read rows only."""
    import torch

    def linear_weights(module: Any) -> int:
        return sum(m.weight.numel() for m in module.modules() if isinstance(m, torch.nn.Linear))

    encoder = linear_weights(model.base_model)
    head = linear_weights(model) - encoder
    layers, hidden = model.config.num_hidden_layers, model.config.hidden_size
    return (
        2 * encoder * counts["padded"]
        + 4 * layers * hidden * counts["attention"]
        + 2 * head * counts["reads"]
    )


if __name__ == "__main__":
    main()
