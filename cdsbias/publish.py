"""Publishing a debiased checkpoint with a model card that shows bias before and after."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from cdsbias.errors import CdsbiasError
from cdsbias.io import atomic_output_dir

# Trainer state that belongs to resuming, not to a published model.
TRAINING_STATE = re.compile(
    r"^(optimizer\.pt|scheduler\.pt|rng_state.*\.pth|training_args\.bin|trainer_state\.json|"
    r"scaler\.pt|global_step.*)$"
)
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


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


def _num(value: float) -> str:
    """Signed, 4 decimals; tiny values (random models) in scientific notation, not -0.0000."""
    return f"{value:+.4f}" if value == 0 or abs(value) >= 1e-3 else f"{value:+.2e}"


def _fmt_ci(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "n/a"
    if low is None or high is None:
        return _num(value)
    return f"{_num(value)} [{_num(low)}, {_num(high)}]"


def model_card(checkpoint: Path, repo_id: str) -> str:
    """The README.md (hub metadata + evidence) for ``checkpoint``."""
    from cdsbias.train.callback import CURVE_FILE, read_points

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
    base = None if recipe.get("init_from_scratch") else recipe.get("model_name_or_path")
    metadata: dict[str, Any] = {
        "library_name": "transformers",
        "pipeline_tag": "fill-mask",
        "license": recipe.get("license", "apache-2.0"),
        "tags": ["cdsbias", "gender-bias", "debiasing", "counterfactual-data-substitution"],
        "datasets": ["gap"],
    }
    if base:
        metadata["base_model"] = base
    lines = ["---", yaml.safe_dump(metadata, sort_keys=False).strip(), "---", ""]
    lines += [
        f"# {repo_id.split('/')[-1]}",
        "",
        f"A {'fine-tuned version of `' + base + '`' if base else 'masked language model'} "
        "debiased with **counterfactual data substitution** (CDS): the model was trained "
        "on GAP Wikipedia text in which gendered words and first names were swapped "
        f"(he↔she, his↔her, John↔Mary, ...; mode `{recipe.get('cds_mode', 'cds')}`, "
        f"p = {recipe.get('cds_probability', 'n/a')}), following Bartl, Nissim & Gatt (2020). "
        f"Checkpoint: step {step}. Produced with [cdsbias](https://pypi.org/project/cdsbias/).",
        "",
        "## Bias before and after",
        "",
    ]
    for name in sorted(after.get("benchmarks", {})):
        first = _summary_at(run_dir, before["step"], name)
        last = _summary_at(run_dir, step, name)
        lines.append(f"### {name}")
        lines.append("")
        if first and last and "groups" in last:
            lines += [
                "| professions | gap before [95% CI] | gap after [95% CI] | r before | r after "
                "| p (Holm) after |",
                "|---|---|---|---|---|---|",
            ]
            for group in last["groups"]:
                g0, g1 = first["groups"].get(group, {}), last["groups"][group]
                w0 = g0.get("wilcoxon_male_vs_female", {})
                w1 = g1.get("wilcoxon_male_vs_female", {})
                ci0 = g0.get("gap_ci_over_professions", [None, None])
                lines.append(
                    f"| {group} | {_fmt_ci(g0.get('gap'), *ci0)} "
                    f"| {_fmt_ci(g1['gap'], *g1['gap_ci_over_professions'])} "
                    f"| {w0.get('r', float('nan')):+.3f} | {w1.get('r', float('nan')):+.3f} "
                    f"| {w1.get('p_holm', float('nan')):.2g} |"
                )
            t0, t1 = first["profession_test"], last["profession_test"]
            lines += [
                "",
                "gap = mean association (male person words) − mean association (female person "
                "words), association = ln P(person | profession) / P(person | profession "
                "masked) (BEC-Pro, Bartl et al. 2020); CIs are bootstrapped over professions.",
                f"Profession-level permutation test (male vs female professions): p = "
                f"{t0['p_value']:.3g} before, {t1['p_value']:.3g} after.",
                f"Verdict after: {last.get('verdict', 'n/a')}",
                "",
            ]
        else:
            metrics0 = before.get("benchmarks", {}).get(name, {}).get("metrics", {})
            lines += ["| metric | before | after |", "|---|---|---|"]
            for key, value in after["benchmarks"][name]["metrics"].items():
                start = metrics0.get(key)
                lines.append(
                    f"| {key} | {start if start is None else f'{start:.4f}'} | {value:.4f} |"
                )
            lines.append("")
    if "heldout_loss" in before and "heldout_loss" in after:
        change = (after["heldout_loss"] - before["heldout_loss"]) / before["heldout_loss"]
        lines += [
            "## Language-modelling cost",
            "",
            f"Held-out MLM loss on original (unswapped) GAP text: {before['heldout_loss']:.4f} "
            f"before, {after['heldout_loss']:.4f} after ({change:+.1%}).",
            "",
        ]
    if (run_dir / CURVE_FILE).exists():
        lines += [
            "## Bias curve",
            "",
            f"![bias and held-out loss per checkpoint]({CURVE_FILE})",
            "",
        ]
    lines += [
        "## Training recipe",
        "",
        "```yaml",
        yaml.safe_dump(recipe, sort_keys=True).strip(),
        "```",
        "",
        "## Citation",
        "",
        "Bartl, M., Nissim, M., & Gatt, A. (2020). Unmasking Contextual Stereotypes: Measuring "
        "and Mitigating BERT's Gender Bias. GeBNLP @ COLING 2020.",
        "",
    ]
    return "\n".join(lines)


def build_folder(checkpoint: Path, repo_id: str, out_dir: Path) -> Path:
    """Writes the exact folder that would be uploaded (model, tokenizer, card, evidence)."""
    from cdsbias.train.callback import CURVE_FILE, METRICS_FILE

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
        (staging / "README.md").write_text(card, encoding="utf-8")
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
