"""HolisticBias pseudo-log-likelihood speed and agreement: batched scorer vs a per-position loop.

The baseline is the plain way of computing a sentence's pseudo-log-likelihood (Salazar et
al. 2020) with ``transformers``: for each sentence, for each word piece, mask it, run the
model on that one sequence and read ``log_softmax`` of the full-vocabulary logits at the
mask. cdsbias (:func:`cdsbias.benchmarks.holistic_bias.sentence_plls`) puts every masked
copy of every sentence into length-sorted batches and projects to the vocabulary only at
the masked position. Both score the same sentences (the age axis of HolisticBias v1.1 when
``--data-dir`` holds it, else the test fixture's) with the same model in the same process.

Prints sentences/s for each, the ratio, the largest |difference| of the sentence PLLs
(the target: 1e-5) and, from ``scripts/_bound.py``, the largest ratio any batching can
reach on this machine, with the verdict on the 5x target. That bound assumes both sides do
the same matrix products; here they do not: the loop projects all N positions of each masked
copy to the vocabulary, the scorer one, so with BERT's 30,522-word vocabulary and a small
model the ratio can far exceed it. ``--age-axis`` then times
the benchmark's whole scoring of the age axis (the paper's 51,584 sentences; ``--all``:
all 52,638) with the same model and extrapolates nothing.

Usage:
    python scripts/bench_pll.py --threads 2                 # random 4 x 256 BERT, real vocab
    python scripts/bench_pll.py --threads 2 --layers 12 --hidden 768 --sentences 10
    python scripts/bench_pll.py --threads 2 --age-axis      # + the whole age axis
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _bound import batching_bound
from _models import bench_setup, load_bench_model

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"


def naive_plls(model, tokenizer, texts: list[str]) -> np.ndarray:
    """One forward pass per masked position, full-vocabulary log-softmax at every position."""
    import torch

    out = []
    for text in texts:
        ids = tokenizer(text)["input_ids"]
        total = 0.0
        for position in range(1, len(ids) - 1):
            masked = list(ids)
            masked[position] = tokenizer.mask_token_id
            with torch.inference_mode():
                logits = model(input_ids=torch.tensor([masked])).logits[0]
            total += torch.log_softmax(logits.float(), dim=-1)[position, ids[position]].item()
        out.append(total)
    return np.asarray(out)


def age_sentences(data_dir: Path | None, sentences: str) -> list[str]:
    """The age axis of v1.1 (the paper's subset or all), else every fixture sentence."""
    from cdsbias.benchmarks import build_benchmark

    if data_dir is not None and (data_dir / "holistic_bias").is_dir():
        spec = {"data_dir": data_dir, "axes": ["age"], "sentences": sentences}
    else:
        spec = {"data_file": REPO / "tests" / "assets" / "holistic_bias", "sentences": sentences}
    return build_benchmark("holistic_bias", spec).rows["text"].tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="masked LM folder or hub id (default: random BERT)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--sentences", type=int, default=40, help="sentences timed on both sides")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--repeats", type=int, default=1, help="timings per side; best kept")
    parser.add_argument("--data-dir", type=Path, default=SHARED if SHARED.is_dir() else None)
    parser.add_argument("--age-axis", action="store_true", help="also time the whole age axis")
    parser.add_argument("--all", action="store_true", help="--age-axis: every sentence")
    parser.add_argument(
        "--age-sample", type=int, help="--age-axis: time this many (seeded) and extrapolate"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    bench_setup(args.threads)
    import torch

    from cdsbias.benchmarks.holistic_bias import sentence_plls
    from cdsbias.scoring import MaskedLMScorer

    model, tokenizer = load_bench_model(args.model, args.layers, args.hidden)
    scorer = MaskedLMScorer(model, tokenizer, batch_size=args.batch_size)
    texts_all = age_sentences(args.data_dir, "all" if args.all else "paper")
    rng = np.random.default_rng(args.seed)
    pick = np.sort(rng.choice(len(texts_all), min(args.sentences, len(texts_all)), replace=False))
    texts = [texts_all[i] for i in pick]
    n_params = sum(p.numel() for p in model.parameters()) / 1e6
    print(
        f"model: {args.model or f'random BERT {args.layers} x {args.hidden}'} "
        f"({n_params:.0f}M parameters, vocab {len(tokenizer)}), torch threads "
        f"{torch.get_num_threads()}, {len(texts)} age sentences, "
        f"{np.mean([len(tokenizer(t)['input_ids']) for t in texts]):.1f} pieces each"
    )
    naive_plls(model, tokenizer, texts[:2])  # warm-up: first passes allocate and pick kernels
    sentence_plls(scorer, texts[:2])
    naive_best = batched_best = float("inf")
    for _ in range(args.repeats):  # alternating, so a busy moment hits both sides
        start = time.perf_counter()
        reference = naive_plls(model, tokenizer, texts)
        naive_best = min(naive_best, time.perf_counter() - start)
        start = time.perf_counter()
        pll, _ = sentence_plls(scorer, texts)
        batched_best = min(batched_best, time.perf_counter() - start)
    ratio = naive_best / batched_best
    diff = float(np.max(np.abs(pll - reference)))
    print(f"per-position loop: {len(texts) / naive_best:8.2f} sentences/s")
    print(f"cdsbias batched:   {len(texts) / batched_best:8.2f} sentences/s")
    print(f"ratio {ratio:.1f}x; max |PLL difference| {diff:.2e} (target 1e-5: "
          f"{'met' if diff <= 1e-5 else 'NOT met'})")  # fmt: skip
    bound = batching_bound(lambda: naive_plls(model, tokenizer, texts), naive_best)
    for line in bound.lines(ratio, 5.0):
        print(line)
    if args.age_axis:
        distinct = list(dict.fromkeys(texts_all))
        timed = distinct
        if args.age_sample and args.age_sample < len(distinct):
            chosen = np.random.default_rng(args.seed + 1).choice(len(distinct), args.age_sample)
            timed = [distinct[i] for i in np.sort(chosen)]
        start, cpu = time.perf_counter(), time.process_time()
        sentence_plls(scorer, timed)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        threads = torch.get_num_threads()
        # CPU seconds over threads: what the wall time would be with the cores to itself.
        print(
            f"age axis: {len(timed)} of its {len(distinct)} sentences scored in {seconds:.0f} s "
            f"({len(timed) / seconds:.0f} sentences/s); {cpu:.0f} CPU s "
            f"(~{cpu / threads:.0f} s on {threads} idle cores)"
        )
        if len(timed) < len(distinct):  # scoring is linear in the sentences
            scale = len(distinct) / len(timed)
            print(
                f"whole age axis, extrapolated: {seconds * scale / 60:.1f} min at this load, "
                f"~{cpu * scale / threads / 60:.1f} min on {threads} idle cores"
            )


if __name__ == "__main__":
    main()
