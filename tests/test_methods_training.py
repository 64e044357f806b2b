"""Partial fine-tuning, LoRA and bottleneck adapters end to end: smoke training runs
(recipes/smoke.yaml on the generated occupations corpus), their checkpoints scored by
``cdsbias evaluate`` exactly as the bias callback scored them, resume, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import torch
from tests_helpers import METHODS, SMOKE, fine_tune, overrides

from cdsbias.cli import main as cli
from cdsbias.runs.folder import RUN_INFO_FILE
from cdsbias.runs.points import read_points
from cdsbias.train.config import load_recipe
from cdsbias.train.run import build_model, run
from cdsbias.train.run import main as train_main

# The smoke recipe's from-scratch keys warn when a saved model is fine-tuned instead.
pytestmark = [
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
    pytest.mark.usefixtures("one_thread"),
]


def method_of(out: Path) -> dict:
    return json.loads((out / RUN_INFO_FILE).read_text())["method"]


def evaluate_matches_callback(checkpoint: Path, becpro: Path, tmp: Path) -> None:
    """``cdsbias evaluate CHECKPOINT`` writes what the callback wrote for that step."""
    step = int(checkpoint.name.removeprefix("checkpoint-"))
    out = tmp / f"evaluate-{checkpoint.parent.name}-{checkpoint.name}"
    code = cli(["evaluate", str(checkpoint), "-b", "becpro", "--data", str(becpro), "--option",
                "n_resamples=50", "--batch-size", "128", "--out", str(out), "--quiet"])  # fmt: skip
    assert code == 0
    ours = json.loads((out / "becpro" / "summary.json").read_text())
    stored = json.loads((checkpoint / "bias_summary.json").read_text())["benchmarks"]["becpro"]
    drop = ("model", "step")  # each side names what it scored
    assert {k: v for k, v in ours.items() if k not in drop} == {
        k: v for k, v in stored.items() if k not in drop
    }
    rows = pd.read_csv(out / "becpro" / "rows.tsv", sep="\t")
    callback_rows = pd.read_csv(
        checkpoint.parent / "bias" / f"step-{step}" / "becpro" / "rows.tsv", sep="\t"
    )
    for column in ("p_tm", "p_tam", "association"):
        assert rows[column].tolist() == callback_rows[column].tolist()


# ------------------------------------------------------------------ partial fine-tuning
def test_partial_fine_tuning_changes_only_the_trainable_weights(tmp_path, becpro):
    from transformers import AutoModelForMaskedLM

    globs = "trainable_parameters=[bert.encoder.layer.1.*, cls.predictions.transform.*]"
    out = tmp_path / "partial"
    initial, _ = build_model(load_recipe(SMOKE, overrides(out, becpro, globs)))
    start = {k: v.clone() for k, v in initial.state_dict().items()}
    trainable = {n for n, p in initial.named_parameters() if p.requires_grad}
    run(load_recipe(SMOKE, overrides(out, becpro, globs)))
    final = AutoModelForMaskedLM.from_pretrained(out).state_dict()
    assert set(final) == set(start)
    changed = {k for k in start if not torch.equal(start[k], final[k])}
    assert changed == trainable  # every trained tensor moved, every frozen one is bit-identical
    assert "bert.embeddings.word_embeddings.weight" not in changed
    method = method_of(out)
    assert method["label"] == (
        "partial fine-tuning (bert.encoder.layer.1.*, cls.predictions.transform.*)"
    )
    assert method["trainable_parameters"] == sum(start[n].numel() for n in trainable)
    assert method["methods"] == ["partial"]
    globs = ["bert.encoder.layer.1.*", "cls.predictions.transform.*"]
    assert method["options"] == {"partial": {"trainable_parameters": globs}}


# ------------------------------------------------------------------ LoRA and bottleneck runs


def test_lora_checkpoints_hold_the_adapter_and_evaluate_like_the_callback(
    lora_run, becpro, base, tmp_path
):
    for folder in (lora_run / "checkpoint-2", lora_run / "checkpoint-4", lora_run):
        names = {p.name for p in folder.iterdir()}
        assert {"adapter_config.json", "adapter_model.safetensors"} <= names
        assert "model.safetensors" not in names
        config = json.loads((folder / "adapter_config.json").read_text())
        assert config["base_model_name_or_path"] == str(base.resolve())
        assert config["r"] == 4 and sorted(config["target_modules"]) == ["query", "value"]
    evaluate_matches_callback(lora_run / "checkpoint-4", becpro, tmp_path)
    method = method_of(lora_run)
    assert method["label"] == "LoRA r=4 (query, value) + dropout 0.20/0.15"
    assert method["options"]["dropout"] == {
        "hidden_dropout_prob": 0.2, "attention_probs_dropout_prob": 0.15,
    }  # fmt: skip
    assert 0 < method["trainable_share"] < 0.1


def test_adapter_checkpoints_hold_the_adapter_and_evaluate_like_the_callback(
    adapter_run, becpro, base, tmp_path
):
    from safetensors.torch import load_file

    for folder in (adapter_run / "checkpoint-2", adapter_run / "checkpoint-4", adapter_run):
        names = {p.name for p in folder.iterdir()}
        assert {"bottleneck_config.json", "bottleneck_adapter.safetensors"} <= names
    evaluate_matches_callback(adapter_run / "checkpoint-4", becpro, tmp_path)
    # The adapter alone (as published or copied) loads with the base its config names.
    alone = tmp_path / "checkpoint-4"
    alone.mkdir()
    for name in ("bottleneck_config.json", "bottleneck_adapter.safetensors", "bias_summary.json"):
        shutil.copy(adapter_run / "checkpoint-4" / name, alone / name)
    (alone.parent / "bias" / "step-4").mkdir(parents=True)
    shutil.copytree(adapter_run / "bias" / "step-4" / "becpro", alone.parent / "bias" / "step-4"
                    / "becpro")  # fmt: skip
    evaluate_matches_callback(alone, becpro, tmp_path)
    # Only the adapter trained: the base weights the Trainer saved are the original ones.
    saved = load_file(str(adapter_run / "checkpoint-4" / "model.safetensors"))
    original = load_file(str(base / "model.safetensors"))
    assert {k for k in saved if ".bottleneck." not in k} == set(original)
    assert all(torch.equal(saved[k], original[k]) for k in original)
    method = method_of(adapter_run)
    assert method["label"] == "bottleneck adapter (reduction 4)"
    assert method["trainable_parameters"] == sum(
        v.numel() for k, v in saved.items() if ".bottleneck." in k
    )


@pytest.fixture(scope="module")
def partial_run(tmp_path_factory, becpro, base) -> Path:
    return fine_tune(tmp_path_factory.mktemp("partial") / "run", becpro, base, *METHODS["partial"])


@pytest.mark.parametrize("method", ["lora", "adapter", "partial"])
def test_a_resumed_run_ends_as_the_uninterrupted_one(method, request, tmp_path, becpro, base):
    """LoRA and adapter runs rebuild base and fresh adapter, and the Trainer restores the
    adapter (LoRA) or the full weights (bottleneck) from checkpoint-2; partial fine-tuning
    loads the checkpoint and freezes the same parameters again."""
    full = request.getfixturevalue(f"{method}_run")
    resumed = tmp_path / "resumed"
    shutil.copytree(full, resumed, ignore=shutil.ignore_patterns("checkpoint-4"))
    fine_tune(resumed, becpro, base, *METHODS[method], "resume_from_checkpoint=true")
    expected, got = read_points(full), read_points(resumed)
    assert [p["step"] for p in got] == [p["step"] for p in expected] == [2, 4]
    for a, b in zip(expected, got):  # one process on the CPU: bit for bit
        assert b["heldout_loss"] == a["heldout_loss"]
        assert b["benchmarks"]["becpro"]["metrics"] == a["benchmarks"]["becpro"]["metrics"]


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["peft_method=prefix"], "'peft_method' must be one of none, lora, adapter"),
        (["init_from_scratch=false", "model_name_or_path=BASE", "peft_method=lora",
          "lora_target_modules=[q_lin]"], "'q_lin' names no layer of this bert model"),
        (["trainable_parameters=[encoder.*]"], "'encoder.*' matches no parameter"),
    ],
)  # fmt: skip
def test_bad_method_input_is_one_line_and_exit_2(extra, message, tmp_path, becpro, base, capsys):
    extra = [e.replace("BASE", str(base)) for e in extra]
    code = train_main([str(SMOKE), *overrides(tmp_path / "out", becpro, *extra)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("error: ") and message in err[-1]
    assert not any("Traceback" in line for line in err)


def test_evaluating_an_adapter_whose_base_is_missing(tmp_path, base, capsys):
    from cdsbias.methods.bottleneck import add_bottleneck_adapters, save_bottleneck
    from cdsbias.scoring import load_masked_lm

    model, _ = load_masked_lm(base, progress=False)
    add_bottleneck_adapters(model, base_model_name_or_path=str(tmp_path / "deleted-base"))
    folder = save_bottleneck(model, tmp_path / "adapter")
    code = cli(["evaluate", str(folder), "-b", "becpro", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("error: The adapter in ") and "deleted-base" in err[-1]
