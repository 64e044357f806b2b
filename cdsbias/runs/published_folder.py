"""What a published repository holds: full weights, a method's saved files alone (e.g. an
adapter naming its base by hub id), or those files merged into the base weights.

What a checkpoint holds is asked of the method registry (:func:`cdsbias.methods.saved_method`):
``None`` means full weights (full, partial or dropout training), else the method that saved
files of its own. A method that publishes an adapter uploads it alone: its base is named
by hub id, since the path training wrote exists only on this machine. A ``mergeable``
method can instead be folded into the base and published as full weights (``--merge``).

A built folder is loaded as its users will load it and scored against the checkpoint it
came from (:func:`check_matches_checkpoint`) before it can be uploaded.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.hub import hub_model_id
from cdsbias.methods import Method, saved_method
from cdsbias.runs.folder import CHECKPOINT_SUMMARY_FILE

#: Files of a checkpoint that an adapter or merged folder takes along: the tokenizer (every
#: format transformers saves) and the checkpoint's bias summary.
_TOKENIZER_FILE = re.compile(
    r"^(tokenizer.*\.json|special_tokens_map\.json|added_tokens\.json|vocab\.(txt|json)|"
    r"merges\.txt|.+\.model)$"
)
#: Masked log-probabilities of a published folder and of its checkpoint may differ by this
#: much, absolute plus relative (merging reorders float32 sums: ~3e-6 nats on a BERT-base).
TOLERANCE = 1e-5
#: Sentences the check scores; generic text, so any tokenizer with a mask token can read them.
_PROBES = (
    "{mask} went to work early this morning.",
    "The new {mask} said that the meeting was over.",
    "After the trip, {mask} wrote a long letter to the family.",
)


def checkpoint_method(folder: Path) -> type[Method] | None:
    """The method whose files ``folder`` holds instead of full weights, or None."""
    return saved_method(folder) if Path(folder).is_dir() else None


def recorded_base(folder: Path, method: type[Method] | None) -> str | None:
    """The base a method's saved folder names (training writes an absolute local path)."""
    return None if method is None else method.recorded_base(folder)


def base_hub_id(folder: Path, method: type[Method] | None, info: dict[str, Any]) -> str | None:
    """The hub id of the model ``folder`` was trained from, or ``None``.

    ``run_info.json`` records it at training time; a saved folder's own base is asked
    too, so a local base whose ``config.json`` names its hub origin later is found.
    """
    return info.get("base_model") or hub_model_id(recorded_base(folder, method))


def require_hub_base(folder: Path, method: type[Method], base_id: str | None) -> str:
    """``base_id``, or the one-line refusal to publish an adapter whose base is local only.

    Raises:
        CdsbiasError: The adapter's base has no hub id.
    """
    if base_id:
        return base_id
    base = recorded_base(folder, method) or "(none recorded)"
    fix = (
        "publish merged full weights with --merge instead, or"
        if method.mergeable
        else f"a {method.title} cannot be merged, so"
    )
    raise CdsbiasError(
        f"The {method.title} in {folder} adapts {base}, which has no hub id, so an "
        f"adapter-only repository could not name its base; {fix} upload the base to the hub "
        "first and set _name_or_path in its config.json to that hub id."
    )


def refuse_merge(folder: Path, method: type[Method]) -> CdsbiasError:
    """The error for ``--merge`` of a method that cannot be merged."""
    return CdsbiasError(
        f"--merge cannot fold the {method.title} in {folder} into its base: it adds "
        "layers the base architecture does not have; publish without --merge (adapter only)."
    )


def copy_side_files(checkpoint: Path, staging: Path) -> bool:
    """Copies the tokenizer and bias summary of ``checkpoint``; returns whether a tokenizer
    was among them."""
    tokenizer = False
    for item in checkpoint.iterdir():
        if item.is_file() and (
            _TOKENIZER_FILE.match(item.name) or item.name == CHECKPOINT_SUMMARY_FILE
        ):
            shutil.copy2(item, staging / item.name)
            tokenizer = tokenizer or item.name == "tokenizer_config.json"
    return tokenizer


def write_saved_files(
    checkpoint: Path, method: type[Method], staging: Path, base_id: str
) -> None:
    """The method's files alone, their config naming the base by ``base_id``.

    A training checkpoint names its base by a path of this machine, which nobody who
    downloads the adapter has.
    """
    config_file, *others = method.files()
    settings = method.name_base(checkpoint, base_id)
    (staging / config_file).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    for name in others:
        if not (checkpoint / name).is_file():
            raise CdsbiasError(f"{checkpoint} has {config_file} but no {name}.")
        shutil.copy2(checkpoint / name, staging / name)


def write_merged(
    checkpoint: Path, method: type[Method], staging: Path, *, has_tokenizer: bool
) -> None:
    """The method's files of ``checkpoint`` merged into its base, saved as full weights.

    Raises:
        CdsbiasError: The base cannot be loaded or the merge fails.
    """
    from cdsbias.scoring import load_masked_lm
    from cdsbias.scoring.loading import progress_bars

    base = recorded_base(checkpoint, method)
    if not base:
        raise CdsbiasError(f"{checkpoint / method.files()[0]} does not name its base model.")
    model, tokenizer = load_masked_lm(base, progress=False)
    merged = method.merge(model, checkpoint)
    with progress_bars(False):
        merged.save_pretrained(staging)
    if not has_tokenizer:  # the base's tokenizer, so the merged folder loads on its own
        tokenizer.save_pretrained(staging)


def _masked_log_probs(model: Any, tokenizer: Any) -> Any:
    import torch

    texts = [p.format(mask=tokenizer.mask_token) for p in _PROBES]
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    batch = {k: v.to(model.device) for k, v in batch.items()}
    with torch.no_grad():
        logits = model(**batch).logits
    return torch.log_softmax(logits[batch["input_ids"] == tokenizer.mask_token_id].float(), -1)


def check_matches_checkpoint(
    folder: Path, checkpoint: Path, base_model: str | None, *, shown: Path | None = None
) -> None:
    """Loads ``folder`` as a user would and checks it scores what ``checkpoint`` scores.

    Args:
        folder: The built folder (full weights, or an adapter naming its base by hub id).
        checkpoint: The checkpoint it was built from (loaded as ``cdsbias evaluate`` does).
        base_model: For an adapter folder, the base to load it onto: the one the checkpoint
            recorded, as the hub id it names may not be reachable from here.
        shown: The folder's name in errors (``folder`` may be a staging folder).

    Raises:
        CdsbiasError: The folder does not load, or its masked log-probabilities differ.
    """
    from cdsbias.scoring import load_masked_lm

    shown = shown or folder
    reference, tokenizer = load_masked_lm(checkpoint, progress=False)
    expected = _masked_log_probs(reference, tokenizer)
    del reference
    try:
        model, tokenizer = load_masked_lm(folder, progress=False, base_model=base_model)
    except CdsbiasError as exc:
        raise CdsbiasError(f"The folder {shown} does not load: {exc}") from None
    got = _masked_log_probs(model, tokenizer)
    if got.shape != expected.shape or not bool(
        (got - expected).abs().le(TOLERANCE + TOLERANCE * expected.abs()).all()
    ):
        worst = (got - expected).abs().max().item() if got.shape == expected.shape else "shape"
        raise CdsbiasError(
            f"The folder {shown} does not score what {checkpoint} scores (largest masked "
            f"log-probability difference {worst}); it was not built from this checkpoint's "
            "weights, so do not upload it."
        )
