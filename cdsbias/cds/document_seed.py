"""What a document's seeded choices are drawn from: its key and the run's seed.

CDS's coin (:mod:`cdsbias.cds.corpus`) and the choice between a binary and a neutral
rendering (:mod:`cdsbias.cds.forms`) both depend only on the seed and the document, never on
batching or ``num_proc``; both read these two functions, which import nothing of cdsbias.
"""

from __future__ import annotations

import hashlib
import random


def document_rng(seed: int, key: str) -> random.Random:
    """Returns a generator that depends only on ``seed`` and the document ``key``."""
    digest = hashlib.blake2b(f"{seed}\x00{key}".encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def text_key(text: str) -> str:
    """A stable key for a document without an id: a hash of its text."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
