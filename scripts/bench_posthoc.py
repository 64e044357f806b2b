"""Post-hoc erasure speed: batched fit-sentence encoding vs bias-bench's loop, and INLP's fit.

1. Feature extraction. bias-bench encodes INLP's fit sentences one at a time
   (``tokenizer(sentence)``, ``model(**inputs)``, mean over tokens; its
   ``_extract_gender_features``). cdsbias encodes them with
   :func:`cdsbias.scoring.embeddings.encode_sentences`: distinct sentences only,
   length-sorted batches, padding masked out. The fit sentences are INLP's selection
   (:func:`cdsbias.methods.fit_sentences.select_inlp_sentences`) from the generated
   occupational corpus plus neutral text. The loop runs on a sample
   (``--baseline-sentences``) and its sentences/s is compared with the batched encoder's on
   all sentences; both are compared for equality on the sample.
2. INLP fit seconds on ``--inlp-rows`` x hidden-size random features (three classes, a
   planted direction), bias-bench's LinearSVC settings, ``--iterations`` classifiers.

Usage:
    python scripts/bench_posthoc.py                       # bert-base-sized random model
    python scripts/bench_posthoc.py --iterations 10       # INLP: 10 of bias-bench's 80
    python scripts/bench_posthoc.py --layers 2 --hidden 128 --inlp-rows 3000   # quick
    python scripts/bench_posthoc.py --gap DATA/gap-coreference/gap-development.tsv --skip-inlp

Prints sentences/s for both encoders and their ratio (target >= 10x), max |delta| on the
sample, the bound on any batching's ratio measured in the same run (``scripts/_bound.py``:
the loop's matrix products at this machine's batched GEMM rate, nothing else, duplicates
once) with the verdict, and INLP's seconds per iteration and in total.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from _bound import batching_bound
from _models import bench_setup, build_random_bert


def fit_sentences(n_documents: int, per_class: int, gap: str | None) -> list[str]:
    """INLP's male, female and neutral fit sentences from generated text or GAP's
    Wikipedia paragraphs (the closest local text to bias-bench's ``wikipedia-2.5.txt``)."""
    from tiny_models import CORPUS

    from cdsbias.data.occupations import occupational_sentences
    from cdsbias.methods.fit_sentences import load_fit_pairs, select_inlp_sentences

    if gap:
        import pandas as pd

        texts = pd.read_csv(gap, sep="\t", quoting=3)["Text"].tolist()
        chosen = select_inlp_sentences(texts, load_fit_pairs(), per_class=per_class,
                                       min_per_class=1)  # fmt: skip
        return chosen.labelled()[0]

    gendered = occupational_sentences(n_documents, seed=0)
    neutral = [
        f"The {a} and the {b} worked on the {c} report for {n} days at the office."
        for n, (a, b, c) in enumerate(
            zip(["clerk", "mason", "nurse"] * 400, ["judge", "taper", "roofer"] * 400,
                ["annual", "weekly", "final"] * 400)
        )
    ]  # fmt: skip
    documents = [" ".join(pair) for pair in zip(gendered, neutral + list(CORPUS) * 100)]
    chosen = select_inlp_sentences(
        documents, load_fit_pairs(), per_class=per_class, min_per_class=1
    )
    sentences, _ = chosen.labelled()
    return sentences


def one_at_a_time(model, tokenizer, sentences) -> np.ndarray:
    """bias-bench's loop: one sentence per forward pass, mean over all its tokens."""
    import torch

    rows = []
    with torch.no_grad():
        for sentence in sentences:
            inputs = tokenizer(sentence, add_special_tokens=True, truncation=True,
                               return_tensors="pt")  # fmt: skip
            states = model(**inputs)["last_hidden_state"]
            rows.append(torch.mean(states, dim=1).squeeze().double().numpy())
    return np.stack(rows)


def bench_encoding(args: argparse.Namespace) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from cdsbias.scoring import MaskedLMScorer
    from cdsbias.scoring.embeddings import encode_sentences

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.model) if args.model else build_random_bert(
            args.layers, args.hidden, Path(tmp) / "bert"
        )  # fmt: skip
        model = AutoModelForMaskedLM.from_pretrained(folder).eval()
        tokenizer = AutoTokenizer.from_pretrained(folder)
    sentences = fit_sentences(args.documents, args.per_class, args.gap)
    scorer = MaskedLMScorer(model, tokenizer, batch_size=args.batch_size)
    distinct = len(set(sentences))
    print(f"model: {model.config.num_hidden_layers} layers x {model.config.hidden_size}")
    print(f"fit sentences: {len(sentences)} ({distinct} distinct)")

    start = time.perf_counter()
    batched = encode_sentences(scorer, sentences)
    batched_seconds = time.perf_counter() - start
    rng = np.random.default_rng(args.seed)
    sample = rng.choice(len(sentences), size=min(args.baseline_sentences, len(sentences)),
                        replace=False)  # fmt: skip
    start = time.perf_counter()
    naive = one_at_a_time(model.base_model, tokenizer, [sentences[i] for i in sample])
    naive_seconds = time.perf_counter() - start

    # Alternating repeats, best kept: a burst of load on the shared machine during one
    # side would otherwise decide the ratio.
    for _ in range(args.repeats - 1):
        start = time.perf_counter()
        encode_sentences(scorer, sentences)
        batched_seconds = min(batched_seconds, time.perf_counter() - start)
        start = time.perf_counter()
        one_at_a_time(model.base_model, tokenizer, [sentences[i] for i in sample])
        naive_seconds = min(naive_seconds, time.perf_counter() - start)

    batched_rate = len(sentences) / batched_seconds
    naive_rate = len(sample) / naive_seconds
    ratio = batched_rate / naive_rate
    print(f"batched encoder: {batched_rate:9.1f} sentences/s ({batched_seconds:.1f} s)")
    print(f"one at a time:   {naive_rate:9.1f} sentences/s ({len(sample)} sentences)")
    print(f"speed-up: {ratio:.1f}x (target >= 10x)")
    print(f"max |delta feature| on the sample: {np.abs(batched[sample] - naive).max():.2e}")
    bound = batching_bound(
        lambda: one_at_a_time(model.base_model, tokenizer, [sentences[i] for i in sample]),
        naive_seconds,
        duplicates=len(sentences) / distinct,
    )
    print("\n".join(bound.lines(ratio, target=10)))


def bench_inlp(args: argparse.Namespace) -> None:
    from cdsbias.methods.inlp_fit import inlp_projection

    rng = np.random.default_rng(args.seed)
    per_class = args.inlp_rows // 3
    y = np.repeat([1, 0, -1], per_class)
    u = rng.normal(size=args.hidden)
    u /= np.linalg.norm(u)
    x = (
        rng.normal(size=(len(y), args.hidden))
        + np.select([y == 1, y == 0], [0.5, -0.5])[:, None] * u
    )
    erasure = inlp_projection(x, y, iterations=args.iterations)
    seconds = erasure.fit_seconds
    print(
        f"INLP on {len(y)} x {args.hidden} features, {args.iterations} iterations: "
        f"{seconds:.1f} s ({seconds / args.iterations:.2f} s an iteration; "
        f"80 iterations ~ {80 * seconds / args.iterations:.0f} s); rank removed "
        f"{erasure.rank_removed}; dev accuracy {erasure.dev_accuracy[0]:.3f} -> "
        f"{erasure.dev_accuracy[-1]:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="masked LM folder or hub id (default: random BERT-base)")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--documents", type=int, default=3000, help="generated documents")
    parser.add_argument("--gap", help="a GAP tsv: its Wikipedia paragraphs as the corpus")
    parser.add_argument("--per-class", type=int, default=1000, help="INLP sentences per class")
    parser.add_argument("--baseline-sentences", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--inlp-rows", type=int, default=30_000)
    parser.add_argument("--iterations", type=int, default=80)
    parser.add_argument("--skip-inlp", action="store_true")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each side; best kept")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    bench_setup(args.threads)
    bench_encoding(args)
    if not args.skip_inlp:
        bench_inlp(args)


if __name__ == "__main__":
    main()
