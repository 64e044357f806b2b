"""Publishing what a run trained: full weights, an adapter alone, or LoRA merged into its base.

A checkpoint is one of three kinds (:func:`checkpoint_kind`):

* ``full`` (full or partial fine-tuning): full weights, published as they are;
* ``lora``: a peft LoRA adapter, published alone (``adapter_config.json`` naming the base
  by its hub id, ``adapter_model.safetensors``), or with ``merge`` folded into the base
  weights by ``merge_and_unload`` and published as full weights;
* ``bottleneck``: a :mod:`cdsbias.bottleneck` adapter beside the full weights the Trainer
  resumes from. Only the adapter is published: those full weights load with a plain
  ``from_pretrained`` *without* the adapter (its tensors are dropped as unexpected keys),
  which would be the base model under the debiased model's name. It adds layers the base
  architecture lacks, so it cannot be merged either.

An adapter or merged folder is loaded as its users will load it and scored against the
checkpoint it came from (:func:`check_matches_checkpoint`) before it can be uploaded.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any, Literal

from cdsbias.bottleneck import CONFIG_FILE as BOTTLENECK_CONFIG
from cdsbias.bottleneck import WEIGHTS_FILE as BOTTLENECK_WEIGHTS
from cdsbias.errors import CdsbiasError
from cdsbias.hub import hub_model_id

Kind = Literal["full", "lora", "bottleneck"]

LORA_CONFIG = "adapter_config.json"
LORA_WEIGHTS = "adapter_model.safetensors"
ADAPTER_FILES: dict[str, tuple[str, str]] = {
    "lora": (LORA_CONFIG, LORA_WEIGHTS),
    "bottleneck": (BOTTLENECK_CONFIG, BOTTLENECK_WEIGHTS),
}
#: Files of a checkpoint that an adapter or merged folder takes along: the tokenizer (every
#: format transformers saves) and the checkpoint's bias summary.
_TOKENIZER_FILE = re.compile(
    r"^(tokenizer.*\.json|special_tokens_map\.json|added_tokens\.json|vocab\.(txt|json)|"
    r"merges\.txt|.+\.model)$"
)
_EVIDENCE_FILES = ("bias_summary.json",)
#: Masked log-probabilities of a published folder and of its checkpoint may differ by this
#: much, absolute plus relative (merging reorders float32 sums: ~3e-6 nats on a BERT-base).
TOLERANCE = 1e-5
#: Sentences the check scores; generic text, so any tokenizer with a mask token can read them.
_PROBES = (
    "{mask} went to work early this morning.",
    "The new {mask} said that the meeting was over.",
    "After the trip, {mask} wrote a long letter to the family.",
)
_ORIGIN = {
    "lora": "A [LoRA](https://arxiv.org/abs/2106.09685) adapter for",
    "bottleneck": "A bottleneck adapter (Pfeiffer et al. 2021, as in ADELE) for",
}


def checkpoint_kind(folder: Path) -> Kind:
    """Whether ``folder`` holds full weights, a LoRA adapter or a bottleneck adapter."""
    if (folder / LORA_CONFIG).is_file():
        return "lora"
    if (folder / BOTTLENECK_CONFIG).is_file():
        return "bottleneck"
    return "full"


def _adapter_settings(folder: Path, kind: Kind) -> dict[str, Any]:
    path = folder / ADAPTER_FILES[kind][0]
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CdsbiasError(f"{path} is not valid JSON: {exc}") from None


def recorded_base(folder: Path, kind: Kind) -> str | None:
    """The base an adapter checkpoint names (training writes an absolute local path)."""
    if kind == "full":
        return None
    return _adapter_settings(folder, kind).get("base_model_name_or_path") or None


def base_hub_id(folder: Path, kind: Kind, info: dict[str, Any]) -> str | None:
    """The hub id of the model ``folder`` was trained from, or ``None``.

    ``run_info.json`` records it at training time; an adapter's own base is asked too, so
    a local base whose ``config.json`` names its hub origin later is found.
    """
    return info.get("base_model") or hub_model_id(recorded_base(folder, kind))


def require_hub_base(folder: Path, kind: Kind, base_id: str | None) -> str:
    """``base_id``, or the one-line refusal to publish an adapter whose base is local only.

    Raises:
        CdsbiasError: The adapter's base has no hub id.
    """
    if base_id:
        return base_id
    base = recorded_base(folder, kind) or "(none recorded)"
    fix = (
        "publish merged full weights with --merge instead, or"
        if kind == "lora"
        else "a bottleneck adapter cannot be merged, so"
    )
    raise CdsbiasError(
        f"The {kind} adapter in {folder} adapts {base}, which has no hub id, so an adapter-only "
        f"repository could not name its base; {fix} upload the base to the hub first and set "
        "_name_or_path in its config.json to that hub id."
    )


def refuse_bottleneck_merge(folder: Path) -> CdsbiasError:
    """The error for ``--merge`` on a bottleneck adapter."""
    return CdsbiasError(
        f"--merge cannot fold the bottleneck adapter in {folder} into its base: it adds "
        "layers the base architecture does not have; publish without --merge (adapter only)."
    )


def copy_side_files(checkpoint: Path, staging: Path) -> bool:
    """Copies the tokenizer and bias summary of ``checkpoint``; returns whether a tokenizer
    was among them."""
    tokenizer = False
    for item in checkpoint.iterdir():
        if item.is_file() and (_TOKENIZER_FILE.match(item.name) or item.name in _EVIDENCE_FILES):
            shutil.copy2(item, staging / item.name)
            tokenizer = tokenizer or item.name == "tokenizer_config.json"
    return tokenizer


def write_adapter(checkpoint: Path, kind: Kind, staging: Path, base_id: str) -> None:
    """The adapter files alone, their config naming the base by ``base_id``.

    A training checkpoint names its base by a path of this machine, which nobody who
    downloads the adapter has.
    """
    config_file, weights_file = ADAPTER_FILES[kind]
    settings = _adapter_settings(checkpoint, kind)
    settings["base_model_name_or_path"] = base_id
    (staging / config_file).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    if not (checkpoint / weights_file).is_file():
        raise CdsbiasError(f"{checkpoint} has {config_file} but no {weights_file}.")
    shutil.copy2(checkpoint / weights_file, staging / weights_file)


def write_merged(checkpoint: Path, staging: Path, *, has_tokenizer: bool) -> None:
    """The LoRA adapter of ``checkpoint`` merged into its base, saved as full weights.

    Raises:
        CdsbiasError: The base cannot be loaded or the merge gives non-finite weights.
    """
    from peft import PeftModel

    from cdsbias.scoring import load_masked_lm
    from cdsbias.scoring.loading import progress_bars

    base = recorded_base(checkpoint, "lora")
    if not base:
        raise CdsbiasError(f"{checkpoint / LORA_CONFIG} does not name its base model.")
    model, tokenizer = load_masked_lm(base, progress=False)
    with warnings.catch_warnings():  # peft asks a transformers 5 API it deprecated
        warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
        try:
            merged = PeftModel.from_pretrained(model, str(checkpoint)).merge_and_unload(
                safe_merge=True
            )
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CdsbiasError(f"Cannot merge the LoRA adapter in {checkpoint}: {detail}") from None
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


def _count(n: int) -> str:
    """Exact below 100,000 (``46,304``), else rounded: ``295k``, ``7.7M``, ``110M``."""
    if n < 100_000:
        return f"{n:,}"
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            value = n / size
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return str(n)


def _share(share: float) -> str:
    if share >= 1.0:
        return "100%"
    return f"{share:.2%}" if share < 0.01 else f"{share:.1%}"


def method_statement(
    method: dict[str, Any] | None, kind: Kind, merged: bool, recipe: dict[str, Any]
) -> str:
    """The card's sentence on what was trained, how much of the model, and what is published.

    Args:
        method: ``run_info.json["method"]`` (``None`` for runs older than its recording).
        kind: The checkpoint's kind.
        merged: Whether a LoRA adapter is published merged into the base weights.
        recipe: The run's recipe, for older runs.
    """
    if method is not None:
        trained = (
            f"{method['label']}: {_count(method['trainable_parameters'])} of "
            f"{_count(method['total_parameters'])} parameters "
            f"({_share(method['trainable_share'])}) trained"
        )
    elif kind == "lora":
        trained = "LoRA"
    elif kind == "bottleneck":
        trained = "bottleneck adapter"
    elif recipe.get("trainable_parameters"):
        trained = f"partial fine-tuning ({', '.join(recipe['trainable_parameters'])})"
    else:
        trained = "full fine-tuning: all parameters trained"
    if merged:
        published = (
            "; the adapter was then merged into the base weights (`merge_and_unload`), so "
            "this repository holds full weights that load without peft."
        )
    elif kind != "full":
        published = (
            "; the base model's weights stayed frozen, and this repository holds only the adapter."
        )
    else:
        published = "."
    return f"**Training method**: {trained}{published}"


def origin_text(kind: Kind, merged: bool, base: str | None) -> str:
    """The card's first words: what this repository is and which model it comes from."""
    link = f"[`{base}`](https://huggingface.co/{base})" if base else None
    if merged:
        return (
            f"{link} with a LoRA adapter merged into its weights"
            if link
            else "A masked language model with a LoRA adapter merged into its weights"
        )
    if kind != "full":
        return f"{_ORIGIN[kind]} {link}"
    return f"A fine-tuned version of {link}" if link else "A masked language model"


def card_metadata(kind: Kind, merged: bool, base: str | None) -> dict[str, Any]:
    """``ModelCardData`` fields that depend on what is published.

    An adapter is related to its base explicitly, so the hub lists it among the base's
    adapters (it detects peft adapters itself, not cdsbias's bottleneck adapters).
    """
    if merged or kind == "full":
        return {"library_name": "transformers", "tags": []}
    relation = {"base_model_relation": "adapter"} if base else {}
    if kind == "lora":
        return {"library_name": "peft", "tags": ["peft", "lora"], **relation}
    return {"tags": ["adapter", "bottleneck-adapter"], **relation}


def usage_lines(
    kind: Kind, merged: bool, repo_id: str, base: str | None, has_tokenizer: bool
) -> list[str]:
    """The card's "How to use" section: the code that loads what this repository holds."""
    tokenizer_from = repo_id if has_tokenizer or merged or kind == "full" else base
    lines = ["## How to use", ""]
    if merged or kind == "full":
        code = [
            "from transformers import AutoModelForMaskedLM, AutoTokenizer",
            "",
            f'model = AutoModelForMaskedLM.from_pretrained("{repo_id}")',
            f'tokenizer = AutoTokenizer.from_pretrained("{tokenizer_from}")',
        ]
    elif kind == "lora":
        lines += [
            "The adapter loads onto its base model with "
            "[peft](https://huggingface.co/docs/peft) (`model.merge_and_unload()` then folds "
            "it into the base weights):",
            "",
        ]
        code = [
            "from peft import PeftModel",
            "from transformers import AutoModelForMaskedLM, AutoTokenizer",
            "",
            f'base = AutoModelForMaskedLM.from_pretrained("{base}")',
            f'model = PeftModel.from_pretrained(base, "{repo_id}").eval()',
            f'tokenizer = AutoTokenizer.from_pretrained("{tokenizer_from}")',
        ]
    else:
        lines += [
            "The adapter's layers are defined by cdsbias (`pip install cdsbias`); "
            "`transformers` alone would load the base model without them. "
            "`cdsbias evaluate FOLDER` scores the downloaded folder.",
            "",
        ]
        tokenizer_arg = "folder" if has_tokenizer else "config.base_model_name_or_path"
        code = [
            "from huggingface_hub import snapshot_download",
            "from transformers import AutoModelForMaskedLM, AutoTokenizer",
            "",
            "from cdsbias.bottleneck import BottleneckConfig, load_bottleneck",
            "",
            f'folder = snapshot_download("{repo_id}")',
            "config = BottleneckConfig.load(folder)",
            "base = AutoModelForMaskedLM.from_pretrained(config.base_model_name_or_path)",
            "model = load_bottleneck(base, folder).eval()",
            f"tokenizer = AutoTokenizer.from_pretrained({tokenizer_arg})",
        ]
    return [*lines, "```python", *code, "```", ""]
