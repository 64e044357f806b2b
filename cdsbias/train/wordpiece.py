"""A deterministic WordPiece vocabulary learnt from a corpus, for models built from scratch.

Used by the training run (``init_from_scratch``) and by the demo model builder
(:mod:`cdsbias.demo.base_model`); it lives apart from both so that neither imports the other.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def train_wordpiece(texts: Any, vocab_size: int) -> Any:
    """A lower-casing BERT WordPiece tokenizer whose vocabulary is learnt from ``texts``.

    The vocabulary is the five BERT specials, every character seen (as a word start and
    as a ``##`` continuation, so no word maps to ``[UNK]``), then the most frequent words,
    ties broken alphabetically. ``tokenizers``' own WordPiece trainer breaks ties in hash
    order, which differs between processes; a run (or its resume, or one of several
    ranks) must get the same vocabulary every time.
    """
    # Imported here, not at the top: the CLI imports this module (through
    # cdsbias.demo.base_model) to build its parser, and should not load transformers for that.
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer
    from transformers import BertTokenizerFast

    normalizer = BertNormalizer(lowercase=True)
    pre_tokenizer = BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    characters = sorted({c for word in counts for c in word})
    vocab = specials + characters + [f"##{c}" for c in characters]
    words = sorted((w for w in counts if len(w) > 1), key=lambda w: (-counts[w], w))
    vocab += words[: max(0, vocab_size - len(vocab))]
    return BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=True)
