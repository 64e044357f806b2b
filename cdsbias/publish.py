"""Publishing a debiased checkpoint with a model card that shows bias before and after."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cdsbias.errors import CdsbiasError
from cdsbias.hub import REPO_ID
from cdsbias.io import atomic_output_dir
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
    swapped = (
        "gendered words and first names were swapped (he↔she, his↔her, John↔Mary, ...)"
        if recipe.get("cds_names", True)
        else "gendered words were swapped (he↔she, his↔her, ...)"
    )
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


def model_card(checkpoint: Path, repo_id: str) -> ModelCard:
    """The hub model card (metadata with ``model-index`` results + evidence) of ``checkpoint``.

    Every benchmark scored during training writes its own section and its own
    ``EvalResult`` entries, before (the first evaluated step) and after (this checkpoint).
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
    base = info.get("base_model")
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

    data = ModelCardData(
        license=recipe.get("license", "apache-2.0"),
        library_name="transformers",
        pipeline_tag="fill-mask",
        tags=["cdsbias", "gender-bias", "debiasing", "counterfactual-data-substitution"],
        datasets=corpus.get("datasets") or None,
        base_model=base or None,
        model_name=repo_id.split("/")[-1],
        eval_results=eval_results or None,
    )
    origin = (
        f"A fine-tuned version of [`{base}`](https://huggingface.co/{base})"
        if base
        else ("A masked language model")
    )
    lines = [
        f"# {repo_id.split('/')[-1]}",
        "",
        f"{origin}, {_method_text(recipe, corpus.get('description') or 'its training text')}, "
        "following Bartl, Nissim & Gatt (2020). "
        f"Checkpoint: step {step}. Produced with [cdsbias](https://pypi.org/project/cdsbias/).",
        "",
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


def build_folder(checkpoint: Path, repo_id: str, out_dir: Path) -> Path:
    """Writes the exact folder that would be uploaded (model, tokenizer, card, evidence)."""
    from cdsbias.train.points import CURVE_FILE, METRICS_FILE

    if not REPO_ID.match(repo_id):
        raise CdsbiasError(f"--repo-id must look like ORG/NAME, got '{repo_id}'.")
    if not checkpoint.is_dir() or not (checkpoint / "config.json").exists():
        raise CdsbiasError(f"{checkpoint} is not a saved model folder (no config.json).")
    card = model_card(checkpoint, repo_id)
    run_dir = _run_dir(checkpoint)
    with atomic_output_dir(out_dir) as staging:
        for item in checkpoint.iterdir():
            if item.is_file() and not TRAINING_STATE.match(item.name):
                shutil.copy2(item, staging / item.name)
        for name in (CURVE_FILE, METRICS_FILE):
            if (run_dir / name).exists():
                shutil.copy2(run_dir / name, staging / name)
        card.save(staging / "README.md")
    _check_loads(out_dir)
    return out_dir


def _check_loads(folder: Path) -> None:
    from transformers import AutoModelForMaskedLM
    from transformers.utils import logging as hf_logging

    previous = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        AutoModelForMaskedLM.from_pretrained(folder)
    except (OSError, ValueError) as exc:
        raise CdsbiasError(f"The folder {folder} does not load as a masked LM: {exc}") from None
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
