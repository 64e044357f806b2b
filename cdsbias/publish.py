"""Publishing a debiased checkpoint with a model card that shows bias before and after."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cdsbias.errors import CdsbiasError
from cdsbias.hub import REPO_ID
from cdsbias.io import atomic_output_dir
from cdsbias.publish_adapters import (
    base_hub_id,
    card_metadata,
    check_matches_checkpoint,
    checkpoint_kind,
    copy_side_files,
    method_statement,
    origin_text,
    recorded_base,
    refuse_bottleneck_merge,
    require_hub_base,
    usage_lines,
    write_adapter,
    write_merged,
)
from cdsbias.train.run import RUN_INFO_FILE, run_info

if TYPE_CHECKING:
    from huggingface_hub import ModelCard

METHOD_CITATION = (
    "Bartl, M., Nissim, M., & Gatt, A. (2020). Unmasking Contextual Stereotypes: Measuring "
    "and Mitigating BERT's Gender Bias. GeBNLP @ COLING 2020."
)
# Trainer state that belongs to resuming, not to a published model.
TRAINING_STATE = re.compile(
    r"^(optimizer\.pt|scheduler\.pt|rng_state.*\.pth|training_args\.bin|trainer_state\.json|"
    r"scaler\.pt|global_step.*)$"
)


#: Files of a run folder that describe the run on this machine, never uploaded.
RUN_RECORDS = frozenset({"recipe.yaml", RUN_INFO_FILE})


def _run_dir(checkpoint: Path) -> Path:
    if (checkpoint / "bias_metrics.jsonl").exists():
        return checkpoint
    if (checkpoint.parent / "bias_metrics.jsonl").exists():
        return checkpoint.parent
    raise CdsbiasError(
        f"{checkpoint} is not a cdsbias run or checkpoint (no bias_metrics.jsonl beside it)."
    )


def _step_of(checkpoint: Path, points: list[dict[str, Any]]) -> int:
    match = re.fullmatch(r"checkpoint-(\d+)", checkpoint.name)
    if match:
        return int(match.group(1))
    return points[-1]["step"]


def _summary_at(run_dir: Path, step: int, benchmark: str) -> dict[str, Any] | None:
    path = run_dir / "bias" / f"step-{step}" / benchmark / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


def _run_info(run_dir: Path, recipe: dict[str, Any]) -> dict[str, Any]:
    """What training recorded for the publisher (older runs: derived from the recipe)."""
    path = run_dir / RUN_INFO_FILE
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    from cdsbias.train.config import DataConfig

    return run_info(recipe, DataConfig(dataset=recipe.get("dataset", "gap")))


def _method_text(recipe: dict[str, Any], corpus: str) -> str:
    mode = recipe.get("cds_mode", "cds")
    if mode == "none":
        return f"trained on {corpus} as it is (no counterfactual substitution)"
    from cdsbias.cds.languages import language_class

    language = language_class(recipe.get("cds_language", "en"))
    examples = language.swap_examples
    if recipe.get("cds_names", True):
        swapped = "gendered words and first names were swapped"
    else:
        swapped, examples = "gendered words were swapped", examples[:-1]
    if examples:
        swapped += f" ({', '.join(examples)}, ...)"
    if language.code != "en":
        swapped += f" with the {language.name} rules"
    if mode == "cda":
        return (
            f"debiased with **counterfactual data augmentation** (CDA): trained on {corpus} "
            f"plus a copy in which {swapped}"
        )
    return (
        f"debiased with **counterfactual data substitution** (CDS): trained on {corpus} in "
        f"which {swapped}, each document with probability p = "
        f"{recipe.get('cds_probability', 'n/a')}"
    )


def model_card(checkpoint: Path, repo_id: str, *, merge: bool = False) -> ModelCard:
    """The hub model card (metadata with ``model-index`` results + evidence) of ``checkpoint``.

    Every benchmark scored during training writes its own section and its own
    ``EvalResult`` entries, before (the first evaluated step) and after (this checkpoint).
    The card says what was trained (method, trainable share), what the repository holds
    (full weights, an adapter, or a LoRA adapter merged with ``merge``) and how to load it.
    """
    from huggingface_hub import ModelCard, ModelCardData

    from cdsbias.benchmarks import Snapshot, build_benchmark
    from cdsbias.train.points import CURVE_FILE, read_points

    run_dir = _run_dir(checkpoint)
    points = read_points(run_dir)
    if not points:
        raise CdsbiasError(f"{run_dir}/bias_metrics.jsonl has no evaluation points.")
    step = _step_of(checkpoint, points)
    by_step = {p["step"]: p for p in points}
    if step not in by_step:
        raise CdsbiasError(f"No bias evaluation was recorded for step {step} of {run_dir}.")
    before, after = points[0], by_step[step]
    recipe_path = run_dir / "recipe.yaml"
    recipe = yaml.safe_load(recipe_path.read_text()) if recipe_path.exists() else {}
    info = _run_info(run_dir, recipe)
    kind = checkpoint_kind(checkpoint)
    merged = merge and kind == "lora"
    base = base_hub_id(checkpoint, kind, info)
    corpus = info.get("corpus", {})

    sections: list[str] = []
    eval_results = []
    citations: list[str] = [METHOD_CITATION]
    for name in sorted(after.get("benchmarks", {})):
        entry = after["benchmarks"][name]
        benchmark = build_benchmark(
            name, {"language": entry.get("language"), **entry.get("options", {})}
        )
        first = before.get("benchmarks", {}).get(name)
        snap_before = (
            Snapshot(before["step"], first["metrics"], _summary_at(run_dir, before["step"], name))
            if first is not None and before["step"] != step
            else None
        )
        snap_after = Snapshot(step, entry["metrics"], _summary_at(run_dir, step, name))
        sections += [f"### {name}", "", benchmark.description + ".", "",
                     benchmark.card_section(snap_before, snap_after), ""]  # fmt: skip
        if snap_before is not None:
            eval_results += benchmark.eval_results(snap_before, when="before")
        eval_results += benchmark.eval_results(snap_after, when="after")
        if benchmark.citation and benchmark.citation not in citations:
            citations.append(benchmark.citation)

    metadata = card_metadata(kind, merged, base)
    tags = ["cdsbias", "gender-bias", "debiasing", "counterfactual-data-substitution"]
    data = ModelCardData(
        license=recipe.get("license", "apache-2.0"),
        pipeline_tag="fill-mask",
        datasets=corpus.get("datasets") or None,
        base_model=base or None,
        model_name=repo_id.split("/")[-1],
        eval_results=eval_results or None,
        **{**metadata, "tags": tags + metadata["tags"]},
    )
    has_tokenizer = (checkpoint / "tokenizer_config.json").is_file()
    lines = [
        f"# {repo_id.split('/')[-1]}",
        "",
        f"{origin_text(kind, merged, base)}, "
        f"{_method_text(recipe, corpus.get('description') or 'its training text')}, "
        "following Bartl, Nissim & Gatt (2020). "
        f"Checkpoint: step {step}. Produced with [cdsbias](https://pypi.org/project/cdsbias/).",
        "",
        method_statement(info.get("method"), kind, merged, recipe),
        "",
        *usage_lines(kind, merged, repo_id, base, has_tokenizer),
        f"## Bias before (step {before['step']}) and after (step {step})",
        "",
        *sections,
    ]
    if "heldout_loss" in before and "heldout_loss" in after:
        change = (after["heldout_loss"] - before["heldout_loss"]) / before["heldout_loss"]
        lines += [
            "## Language-modelling cost",
            "",
            f"Held-out MLM loss on original (unswapped) text: {before['heldout_loss']:.4f} "
            f"before, {after['heldout_loss']:.4f} after ({change:+.1%}).",
            "",
        ]
    if (run_dir / CURVE_FILE).exists():
        lines += ["## Bias curve", "", f"![bias and held-out loss per step]({CURVE_FILE})", ""]
    lines += [
        "## Training recipe",
        "",
        "The keys that shaped this model (paths and evaluation settings left out):",
        "",
        "```yaml",
        yaml.safe_dump(info.get("card_recipe", {}), sort_keys=True).strip(),
        "```",
        "",
        "## Citation",
        "",
        *[f"{c}\n" for c in citations],
    ]
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines))


def build_folder(checkpoint: Path, repo_id: str, out_dir: Path, *, merge: bool = False) -> Path:
    """Writes the exact folder that would be uploaded (weights or adapter, tokenizer, card,
    evidence) and checks that it loads.

    Full weights are published as they are. An adapter checkpoint (LoRA or bottleneck)
    gives the adapter alone, its config naming the base by hub id; with ``merge`` a LoRA
    adapter is merged into its base and published as full weights.

    Raises:
        CdsbiasError: A bad repo id or checkpoint, an adapter whose base has no hub id,
            ``merge`` of a bottleneck adapter, or a folder that does not load as trained.
    """
    from cdsbias.train.points import CURVE_FILE, METRICS_FILE

    if not REPO_ID.match(repo_id):
        raise CdsbiasError(f"--repo-id must look like ORG/NAME, got '{repo_id}'.")
    kind = checkpoint_kind(checkpoint) if checkpoint.is_dir() else "full"
    if kind == "full" and not (checkpoint / "config.json").exists():
        raise CdsbiasError(
            f"{checkpoint} is not a saved model folder (no config.json, adapter_config.json "
            "or bottleneck_config.json)."
        )
    if merge and kind == "bottleneck":
        raise refuse_bottleneck_merge(checkpoint)
    if merge and kind == "full":
        warnings.warn(
            f"--merge: {checkpoint} holds full weights (no adapter), so there is nothing to "
            "merge; publishing them as they are.",
            stacklevel=2,
        )
        merge = False
    run_dir = _run_dir(checkpoint)
    if kind != "full" and not merge:
        recipe_path = run_dir / "recipe.yaml"
        recipe = yaml.safe_load(recipe_path.read_text()) if recipe_path.exists() else {}
        base_id = require_hub_base(
            checkpoint, kind, base_hub_id(checkpoint, kind, _run_info(run_dir, recipe))
        )
    card = model_card(checkpoint, repo_id, merge=merge)
    with atomic_output_dir(out_dir) as staging:
        if kind == "full":
            for item in checkpoint.iterdir():
                # A run folder's own records name paths of this machine; the card holds
                # what of them shaped the model.
                private = TRAINING_STATE.match(item.name) or item.name in RUN_RECORDS
                if item.is_file() and not private:
                    shutil.copy2(item, staging / item.name)
        else:
            has_tokenizer = copy_side_files(checkpoint, staging)
            if merge:
                write_merged(checkpoint, staging, has_tokenizer=has_tokenizer)
            else:
                write_adapter(checkpoint, kind, staging, base_id)
        for name in (CURVE_FILE, METRICS_FILE):
            if (run_dir / name).exists():
                shutil.copy2(run_dir / name, staging / name)
        card.save(staging / "README.md")
        # Checked before the folder replaces out_dir: a folder that fails is never left
        # behind to be uploaded by hand.
        if kind == "full":
            _check_loads(staging, out_dir)
        else:
            base = None if merge else recorded_base(checkpoint, kind)
            check_matches_checkpoint(staging, checkpoint, base, shown=out_dir)
    return out_dir


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
