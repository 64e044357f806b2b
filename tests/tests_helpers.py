"""Small builders shared by tests (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

from pathlib import Path


def save_bare_encoder(folder: Path, config_cls, model_cls) -> Path:
    """Saves an encoder *without* an MLM head plus a tokenizer, like a sentence-embedding model."""
    from conftest import WORDS
    from transformers import BertTokenizerFast

    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)})
    config = config_cls(
        vocab_size=len(tokens), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64,
    )  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    model_cls(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
