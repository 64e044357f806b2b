"""Publishing a debiased checkpoint: the folder to upload (weights or a method's own files,
tokenizer, evidence, model card), checked to load as trained, then uploaded."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

from cdsbias.errors import CdsbiasError
from cdsbias.hub import REPO_ID
from cdsbias.io import atomic_output_dir, check_json_files, check_safetensors
from cdsbias.methods import attached_methods
from cdsbias.runs.card import model_card
from cdsbias.runs.folder import CURVE_FILE, METRICS_FILE, RUN_RECORDS, RunFolder
from cdsbias.runs.published_folder import (
    base_hub_id,
    check_matches_checkpoint,
    checkpoint_method,
    copy_side_files,
    recorded_base,
    refuse_merge,
    require_hub_base,
    write_merged,
    write_saved_files,
)
from cdsbias.scoring.loading import DAMAGED_WEIGHTS_FIX

# Trainer state that belongs to resuming, not to a published model.
TRAINING_STATE = re.compile(
    r"^(optimizer\.pt|scheduler\.pt|rng_state.*\.pth|training_args\.bin|trainer_state\.json|"
    r"scaler\.pt|global_step.*)$"
)


def build_folder(checkpoint: Path, repo_id: str, out_dir: Path, *, merge: bool = False) -> Path:
    """Writes the exact folder that would be uploaded (weights or adapter, tokenizer, card,
    evidence) and checks that it loads.

    Full weights are published as they are. A checkpoint holding a method's own files
    (an adapter) gives those files alone, their config naming the base by hub id; with
    ``merge`` a mergeable method is folded into its base and published as full weights.

    Raises:
        CdsbiasError: A bad repo id or checkpoint, an adapter whose base has no hub id,
            ``merge`` of a method that cannot be merged, or a folder that does not load as
            trained.
    """
    if not REPO_ID.match(repo_id):
        raise CdsbiasError(f"--repo-id must look like ORG/NAME, got '{repo_id}'.")
    # A damaged weights or JSON file is named before anything is built.
    check_safetensors(checkpoint, fix=DAMAGED_WEIGHTS_FIX)
    check_json_files(checkpoint, fix=DAMAGED_WEIGHTS_FIX)
    saved = checkpoint_method(checkpoint)
    attached = attached_methods(checkpoint)  # full weights copy their files as they are
    if saved is None and not (checkpoint / "config.json").exists():
        raise CdsbiasError(
            f"{checkpoint} is not a saved model folder (no config.json, and no files a "
            "debiasing method saves instead)."
        )
    if merge and saved is not None and not saved.mergeable:
        raise refuse_merge(checkpoint, saved)
    if merge and saved is None:
        warnings.warn(
            f"--merge: {checkpoint} holds full weights (no adapter), so there is nothing to "
            "merge; publishing them as they are.",
            stacklevel=2,
        )
        merge = False
    run = RunFolder.of(checkpoint)
    if saved is not None and not merge:
        base_id = require_hub_base(
            checkpoint, saved, base_hub_id(checkpoint, saved, run.run_info())
        )
    card = model_card(checkpoint, repo_id, merge=merge)
    with atomic_output_dir(out_dir) as staging:
        if saved is None:
            for item in checkpoint.iterdir():
                # A run folder's own records name paths of this machine; the card holds
                # what of them shaped the model.
                private = TRAINING_STATE.match(item.name) or item.name in RUN_RECORDS
                if item.is_file() and not private:
                    shutil.copy2(item, staging / item.name)
        else:
            has_tokenizer = copy_side_files(checkpoint, staging)
            if merge:
                write_merged(checkpoint, saved, staging, has_tokenizer=has_tokenizer)
            else:
                write_saved_files(checkpoint, saved, staging, base_id)
            for method in attached:  # e.g. a forward hook's map, beside the adapter
                for name in method.attached_files:
                    shutil.copy2(checkpoint / name, staging / name)
        for name in (CURVE_FILE, METRICS_FILE):
            if (run.path / name).exists():
                shutil.copy2(run.path / name, staging / name)
        _drop_local_paths(staging)
        card.save(staging / "README.md")
        # Checked before the folder replaces out_dir: a folder that fails is never left
        # behind to be uploaded by hand.
        if saved is None and not attached:
            _check_loads(staging, out_dir)
        else:
            base = None if merge else recorded_base(checkpoint, saved)
            check_matches_checkpoint(staging, checkpoint, base, shown=out_dir)
    return out_dir


def _drop_local_paths(folder: Path) -> None:
    """Rewrites the run's JSON records copied into ``folder`` (a post-hoc fit's record,
    the bias points) with each absolute path of this machine shortened to its file name:
    an uploaded folder names no local path (``/home/me/age.tsv`` -> ``age.tsv``)."""
    import json
    import os

    def public(value: object) -> object:
        if isinstance(value, str) and os.path.isabs(value):
            return Path(value).name
        if isinstance(value, dict):
            return {key: public(item) for key, item in value.items()}
        if isinstance(value, list):
            return [public(item) for item in value]
        return value

    for path in sorted(folder.glob("*.json")) + sorted(folder.glob("*.jsonl")):
        if path.name in _MODEL_FILES:
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
            if public(records) != records:  # a file without local paths keeps its bytes
                lines = [json.dumps(public(record), sort_keys=True) for record in records]
                path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        else:
            record = json.loads(text)
            if public(record) != record:
                path.write_text(json.dumps(public(record), indent=2) + "\n", encoding="utf-8")


#: Files transformers and tokenizers write: loaded as they are, never rewritten.
_MODEL_FILES = frozenset(
    {"config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
     "generation_config.json", "added_tokens.json", "vocab.json", "adapter_config.json"}
)  # fmt: skip


def _check_loads(folder: Path, shown: Path) -> None:
    """Full weights in ``folder`` (to become ``shown``) load as a masked LM."""
    from transformers import AutoModelForMaskedLM
    from transformers.utils import logging as hf_logging

    from cdsbias.scoring.loading import progress_bars

    previous = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with progress_bars(False):
            AutoModelForMaskedLM.from_pretrained(folder)
    except (OSError, ValueError) as exc:
        raise CdsbiasError(f"The folder {shown} does not load as a masked LM: {exc}") from None
    finally:
        hf_logging.set_verbosity(previous)


def upload(folder: Path, repo_id: str, *, private: bool) -> str:
    """Uploads ``folder`` with huggingface_hub; a failure keeps the folder and says why."""
    from huggingface_hub import HfApi

    api = HfApi()
    try:
        api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
        info = api.upload_folder(
            folder_path=str(folder), repo_id=repo_id, repo_type="model",
            commit_message="Upload CDS-debiased checkpoint (cdsbias)",
        )  # fmt: skip
    except Exception as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CdsbiasError(
            f"Upload to {repo_id} failed ({detail}); the folder is intact at {folder}: retry "
            f"with `huggingface-cli upload {repo_id} {folder}` after `huggingface-cli login`."
        ) from None
    return str(getattr(info, "commit_url", info))
