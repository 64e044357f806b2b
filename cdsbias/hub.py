"""Hugging Face hub names: what is a repo id, and which hub model a local folder came from."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: Canonical hub ids of the original BERT family, which have no organisation prefix.
_LEGACY_ID = re.compile(r"^[A-Za-z0-9][\w.-]*$")


def is_repo_id(name: str) -> bool:
    """Whether ``name`` reads as a hub repo id (``org/name`` or a legacy ``bert-base-uncased``)."""
    return bool(REPO_ID.match(name) or _LEGACY_ID.match(name))


def hub_model_id(name_or_path: str | os.PathLike | None) -> str | None:
    """The hub id of a model given as a hub id or a local folder, or ``None``.

    A name that is not an existing path is a hub id. A local folder names its hub origin
    in ``config.json``'s ``_name_or_path`` when it was saved from a hub model; a folder
    whose origin is itself a path (a model trained here) has none, and the model card
    then gives no ``base_model`` rather than a path of this machine.
    """
    if not name_or_path:
        return None
    name = str(name_or_path)
    if not Path(name).exists():
        return name if is_repo_id(name) else None
    config = Path(name) / "config.json"
    try:
        origin = json.loads(config.read_text(encoding="utf-8")).get("_name_or_path") or ""
    except (OSError, ValueError):
        return None
    origin = str(origin)
    if not origin or Path(origin).exists() or origin.startswith((".", "/", "~")):
        return None
    return origin if is_repo_id(origin) else None
