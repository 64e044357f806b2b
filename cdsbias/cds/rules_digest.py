"""The digest of everything that decides a counterfactual besides a mapper's settings.

``datasets`` caches ``Dataset.map`` results on disk under a fingerprint that hashes the
pickled map function: for a mapper object, its class *name* and its attributes, not the
code of its rules. A corpus read from files (``load_dataset``: a user's JSONL, Wikipedia)
and mapped by one release of cdsbias would be read back from that cache by the next, with
the old rules' output. Every CDS mapper therefore carries :func:`rules_digest` as an
attribute: a new rule, word or guard changes the fingerprint, and the corpus is mapped again.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
#: What a substitution reads: the CDS code (engine, languages, guard, forms), the axes'
#: code, and the word lists of both (every file under these, by relative path).
SOURCES = (
    ("cds", "*.py"),
    ("axes", "*.py"),
    ("resources/wordlists", "*"),
    ("resources/axes", "*"),
)


@cache
def rules_digest() -> str:
    """SHA-256 (16 hex digits) of every file of :data:`SOURCES`, names and contents, in
    sorted order; computed once per process."""
    digest = hashlib.sha256()
    for folder, pattern in SOURCES:
        root = _PACKAGE / folder
        for path in sorted(root.rglob(pattern)):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
