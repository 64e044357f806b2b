"""Publishing LoRA, bottleneck and partial fine-tuning runs: adapter-only folders naming their
base by hub id, LoRA merged into full weights, the card's method, trainable share and loading
code, and the refusals (a base without hub id, merging a bottleneck)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from huggingface_hub import ModelCard
from tests_helpers import METHODS, fine_tune
from tiny_models import tiny_masked_lm

from cdsbias.cli import main as cli
from cdsbias.errors import CdsbiasError
from cdsbias.runs.folder import RUN_INFO_FILE
from cdsbias.runs.published_folder import check_matches_checkpoint
from cdsbias.scoring import load_masked_lm

HUB_BASE = "org/tiny-bert"
pytestmark = [
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
    # peft, run by the card's code, asks a transformers 5 API it deprecated
    pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning"),
    pytest.mark.usefixtures("one_thread"),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A local base that names its hub origin, as a folder saved from a hub model does."""
    folder = tiny_masked_lm("bert", tmp_path_factory.mktemp("base") / "bert")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "_name_or_path": HUB_BASE}))
    return folder


@pytest.fixture(scope="module")
def partial_run(tmp_path_factory, becpro, base) -> Path:
    return fine_tune(tmp_path_factory.mktemp("partial") / "run", becpro, base, *METHODS["partial"])


def publish(checkpoint: Path, out: Path, *extra: str, repo_id: str = "org/debiased") -> int:
    return cli(["publish", str(checkpoint), "--repo-id", repo_id, "--dry-run", "--out", str(out),
                *extra])  # fmt: skip


def files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def stated_share(run: Path) -> str:
    """The card's words for the run's method and trainable share."""
    method = json.loads((run / RUN_INFO_FILE).read_text())["method"]
    return (
        f"{method['label']}: {method['trainable_parameters']:,} of "
        f"{method['total_parameters']:,} parameters ({method['trainable_share']:.1%}) trained"
    )


def mask_log_probs(model, tokenizer) -> torch.Tensor:
    batch = tokenizer([f"{tokenizer.mask_token} is a nurse.", f"My {tokenizer.mask_token} works."],
                      return_tensors="pt", padding=True)  # fmt: skip
    with torch.no_grad():
        logits = model(**batch).logits
    return torch.log_softmax(logits[batch["input_ids"] == tokenizer.mask_token_id], -1)


def run_card_code(card: str, hub: dict[str, Path], tmp_path: Path, monkeypatch):
    """Runs the card's loading code against a stand-in hub: each repo id is a local folder
    under the working directory, which transformers and peft read before asking the hub."""
    import huggingface_hub

    for repo_id, folder in hub.items():
        (tmp_path / repo_id).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / repo_id).symlink_to(folder, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda repo_id, **_: repo_id)
    code = re.search(r"## How to use\n.*?```python\n(.*?)```", card, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    return namespace["model"], namespace["tokenizer"]


# ------------------------------------------------------------------ LoRA
def test_lora_run_publishes_the_adapter_alone_naming_its_hub_base(
    lora_run, base, tmp_path, monkeypatch
):
    checkpoint, out = lora_run / "checkpoint-4", tmp_path / "published"
    assert publish(checkpoint, out) == 0
    assert files(out) == {"README.md", "adapter_config.json", "adapter_model.safetensors",
                          "tokenizer.json", "tokenizer_config.json", "bias_summary.json",
                          "bias_curve.png", "bias_metrics.jsonl"}  # fmt: skip
    config = json.loads((out / "adapter_config.json").read_text())
    trained = json.loads((checkpoint / "adapter_config.json").read_text())
    assert trained["base_model_name_or_path"] == str(base.resolve())
    assert config == {**trained, "base_model_name_or_path": HUB_BASE}
    weights = "adapter_model.safetensors"
    assert (out / weights).read_bytes() == (checkpoint / weights).read_bytes()

    card = ModelCard.load(out / "README.md")
    assert card.data.base_model == HUB_BASE and card.data.library_name == "peft"
    assert {"lora", "peft", "cdsbias"} <= set(card.data.tags)
    assert card.data.base_model_relation == "adapter"
    evaluated = {(r.metric_args["when"], r.metric_args["step"]) for r in card.data.eval_results}
    assert evaluated == {("before", 2), ("after", 4)}
    assert "LoRA r=4 (query, value) + dropout 0.20/0.15: 1,024 of 46,304 parameters" in card.text
    assert stated_share(lora_run) in card.text and "holds only the adapter" in card.text
    assert str(tmp_path.parent) not in (out / "README.md").read_text()

    # The card's code loads the adapter onto its base and scores what the checkpoint scores.
    model, tokenizer = run_card_code(
        card.text, {HUB_BASE: base, "org/debiased": out}, tmp_path, monkeypatch
    )
    expected = mask_log_probs(*load_masked_lm(checkpoint, progress=False))
    assert torch.equal(mask_log_probs(model, tokenizer), expected)


def test_a_published_adapter_repo_loads_by_its_hub_id(lora_run, base, tmp_path, monkeypatch):
    """``cdsbias evaluate ORG/NAME`` of an adapter repo: no config.json, so the adapter's."""
    import huggingface_hub

    checkpoint, out = lora_run / "checkpoint-4", tmp_path / "published"
    assert publish(checkpoint, out) == 0
    hub = {"org/debiased": out}

    def download(repo_id, filename, **_):
        path = hub[repo_id] / filename
        if not path.is_file():
            raise huggingface_hub.errors.LocalEntryNotFoundError(f"no {filename}")
        return str(path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda repo_id, **_: hub[repo_id])
    (tmp_path / HUB_BASE).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / HUB_BASE).symlink_to(base, target_is_directory=True)  # the base, "on the hub"
    monkeypatch.chdir(tmp_path)
    model, tokenizer = load_masked_lm("org/debiased", progress=False)
    expected = mask_log_probs(*load_masked_lm(checkpoint, progress=False))
    assert torch.equal(mask_log_probs(model, tokenizer), expected)


def test_lora_merge_publishes_full_weights_that_score_as_the_adapter(lora_run, becpro, tmp_path):
    from transformers import AutoModelForMaskedLM

    out = tmp_path / "merged"
    assert publish(lora_run / "checkpoint-4", out, "--merge") == 0
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= files(out)
    assert not {"adapter_config.json", "adapter_model.safetensors"} & files(out)
    assert not any(".lora_" in k for k in AutoModelForMaskedLM.from_pretrained(out).state_dict())
    card = ModelCard.load(out / "README.md")
    assert card.data.base_model == HUB_BASE and card.data.library_name == "transformers"
    assert "merged into the base weights (`merge_and_unload`)" in card.text
    assert stated_share(lora_run) in card.text
    # Scored as the training callback scored the adapter at step 4, within float32 merging.
    scored = tmp_path / "scored"
    assert cli(["evaluate", str(out), "-b", "becpro", "--data", str(becpro), "--option",
                "n_resamples=50", "--out", str(scored), "--quiet"]) == 0  # fmt: skip
    merged = pd.read_csv(scored / "becpro" / "rows.tsv", sep="\t")
    adapter = pd.read_csv(lora_run / "bias" / "step-4" / "becpro" / "rows.tsv", sep="\t")
    # Probabilities compared as log-probabilities: 1e-5 nats, like the association.
    for column in ("p_tm", "p_tam"):
        got, expected = np.log(merged[column].to_numpy()), np.log(adapter[column].to_numpy())
        assert got == pytest.approx(expected, abs=1e-5)
    got, expected = merged["association"].to_numpy(), adapter["association"].to_numpy()
    assert got == pytest.approx(expected, abs=1e-5)


def test_lora_adapter_of_a_local_only_base_needs_merge(lora_run, base, tmp_path, capsys):
    """A base with no hub id cannot be named by an adapter repo; merged weights need none."""
    run = tmp_path / "run"
    shutil.copytree(lora_run, run, ignore=shutil.ignore_patterns("checkpoint-2"))
    local = shutil.copytree(base, tmp_path / "local-base")
    config = json.loads((local / "config.json").read_text())
    (local / "config.json").write_text(json.dumps({**config, "_name_or_path": str(local)}))
    info = json.loads((run / RUN_INFO_FILE).read_text())
    (run / RUN_INFO_FILE).write_text(json.dumps({**info, "base_model": None}))
    adapter_config = run / "checkpoint-4" / "adapter_config.json"
    settings = json.loads(adapter_config.read_text())
    adapter_config.write_text(json.dumps({**settings, "base_model_name_or_path": str(local)}))

    assert publish(run / "checkpoint-4", tmp_path / "adapter") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: The LoRA in ")
    assert "has no hub id" in err[0] and "--merge" in err[0]
    assert not (tmp_path / "adapter").exists()

    assert publish(run / "checkpoint-4", tmp_path / "merged", "--merge") == 0
    card = (tmp_path / "merged" / "README.md").read_text()
    assert ModelCard.load(tmp_path / "merged" / "README.md").data.base_model is None
    assert "A masked language model with a LoRA adapter merged" in card
    assert str(tmp_path) not in card


# ------------------------------------------------------------------ bottleneck adapter
def test_bottleneck_run_publishes_the_adapter_alone(adapter_run, base, tmp_path, monkeypatch):
    checkpoint, out = adapter_run / "checkpoint-4", tmp_path / "published"
    assert publish(checkpoint, out) == 0
    # Never the Trainer's full weights: from_pretrained would load them without the adapter.
    assert files(out) == {"README.md", "bottleneck_config.json", "bottleneck_adapter.safetensors",
                          "tokenizer.json", "tokenizer_config.json", "bias_summary.json",
                          "bias_curve.png", "bias_metrics.jsonl"}  # fmt: skip
    config = json.loads((out / "bottleneck_config.json").read_text())
    assert config == {"model_type": "bert", "hidden_size": 32, "reduction_factor": 4,
                      "non_linearity": "relu", "base_model_name_or_path": HUB_BASE}  # fmt: skip
    card = ModelCard.load(out / "README.md")
    assert card.data.base_model == HUB_BASE and card.data.base_model_relation == "adapter"
    assert "bottleneck-adapter" in card.data.tags
    assert stated_share(adapter_run) in card.text and "pip install cdsbias" in card.text

    model, tokenizer = run_card_code(
        card.text, {HUB_BASE: base, "org/debiased": out}, tmp_path, monkeypatch
    )
    expected = mask_log_probs(*load_masked_lm(checkpoint, progress=False))
    assert torch.equal(mask_log_probs(model, tokenizer), expected)


def test_bottleneck_merge_is_refused(adapter_run, tmp_path, capsys):
    assert publish(adapter_run / "checkpoint-4", tmp_path / "out", "--merge") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --merge cannot fold the bottleneck")
    assert "publish without --merge" in err[0]
    assert not (tmp_path / "out").exists()


def test_a_folder_that_scores_differently_is_refused(adapter_run, base, tmp_path):
    from safetensors.torch import load_file, save_file

    checkpoint, out = adapter_run / "checkpoint-4", tmp_path / "published"
    assert publish(checkpoint, out) == 0
    weights = out / "bottleneck_adapter.safetensors"
    generator = torch.Generator().manual_seed(0)
    other = {k: torch.randn(v.shape, generator=generator) * 0.1
             for k, v in load_file(str(weights)).items()}  # fmt: skip
    save_file(other, str(weights))
    with pytest.raises(CdsbiasError, match=r"does not score what .* scores"):
        check_matches_checkpoint(out, checkpoint, str(base))


# ------------------------------------------------------------------ full weights
def test_partial_fine_tuning_card_states_the_method_and_merge_warns(partial_run, tmp_path, capsys):
    out = tmp_path / "published"
    assert publish(partial_run / "checkpoint-4", out, "--merge") == 0
    err = capsys.readouterr().err
    assert "warning: --merge: " in err and "nothing to merge" in err
    assert {"config.json", "model.safetensors"} <= files(out)
    card = ModelCard.load(out / "README.md")
    assert card.data.library_name == "transformers" and card.data.base_model == HUB_BASE
    assert stated_share(partial_run) in card.text
    assert "partial fine-tuning (bert.encoder.layer.1.*, cls.predictions.transform.*): " in (
        card.text
    )
    assert 'AutoModelForMaskedLM.from_pretrained("org/debiased")' in card.text
