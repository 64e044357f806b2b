"""One contract over every downstream task; fine-tuning, seeds, the two post-hoc variants
and the command's errors (tiny BERT, fixture sets of a few dozen examples, a few steps)."""

from __future__ import annotations

import json
import math
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import ASSETS, REPO
from tiny_models import tiny_masked_lm

from cdsbias.cli import main
from cdsbias.downstream import REGISTRY, get_task, list_tasks, load_all
from cdsbias.downstream.finetune import FinetuneConfig, finetune_and_predict, prepared_classifier
from cdsbias.downstream.runner import ROWS_FILE, SEEDS_FILE, SUMMARY_FILE, run_downstream
from cdsbias.errors import CdsbiasError

pytestmark = pytest.mark.usefixtures("one_thread")
load_all()
NAMES = sorted(REGISTRY)
DATA = ASSETS / "downstream"
#: A few steps at a learning rate that moves a random 2-layer model.
#: Options that fit each task to its fixture set (a few test examples per group).
FIXTURE_OPTIONS: dict[str, dict] = {"bias_in_bios": {"min_group_examples": 2}}
QUICK = FinetuneConfig(learning_rate=5e-3, max_steps=4, batch_size=8, max_length=32)


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return tiny_masked_lm("bert", tmp_path_factory.mktemp("downstream") / "bert")


def _run(model: Path, name: str, out: Path, **kwargs):
    kwargs.setdefault("options", {"n_resamples": 50, **FIXTURE_OPTIONS.get(name, {})})
    kwargs.setdefault("config", QUICK)
    return run_downstream([str(model)], name, out, data_dir=DATA / name, **kwargs)


# ------------------------------------------------------------------------------ contract
@pytest.mark.parametrize("name", NAMES)
def test_declares_what_callers_need(name):
    task = REGISTRY[name]
    assert task.description and task.citation.strip().startswith("@")
    assert task.headline and all(m.better in ("lower", "higher", "closer") for m in task.headline)
    assert task.text_columns and task.label_column
    assert (DATA / name).is_dir(), f"tests/assets/downstream/{name}/ (a fixture) is missing"
    assert name in list_tasks()


@pytest.mark.parametrize("name", NAMES)
def test_finetuning_writes_rows_seeds_and_summary_with_finite_metrics(name, bert, tmp_path):
    summary = _run(bert, name, tmp_path, seeds=(0, 1))
    folder = tmp_path / name
    rows = pd.read_csv(folder / ROWS_FILE, sep="\t")
    task = get_task(name)
    n_test = summary["data"]["n_test"]
    assert len(rows) == 2 * n_test
    expected = ["model", "variant", "seed", "example", task.label_column,
                *task.group_columns, "prediction"]  # fmt: skip
    assert list(rows.columns) == expected
    seeds = pd.read_csv(folder / SEEDS_FILE, sep="\t")
    assert list(seeds["seed"]) == [0, 1] and (seeds["steps"] == QUICK.max_steps).all()
    written = json.loads((folder / SUMMARY_FILE).read_text())
    assert written["task"] == name and written["seeds"] == [0, 1]
    (entry,) = written["results"]
    assert entry["variant"] == "none"
    utility = task.headline[0].key
    for metric in task.headline:
        assert metric.key in entry["metrics"]
    value = entry["metrics"][utility]
    assert math.isfinite(value["value"]) and value["ci_low"] <= value["value"] <= value["ci_high"]
    units = rows.loc[rows["seed"] == 0, "example"].nunique()  # rows, or pairs of rows
    assert value["n_seeds"] == 2 and value["n_examples"] == units
    # The summary is recomputable from rows.tsv.
    again = get_task(name)({**FIXTURE_OPTIONS.get(name, {}), "n_resamples": 0}, DATA / name)
    again.load()
    recomputed = again.statistics(rows)
    for key, stored in entry["metrics"].items():
        if stored["value"] is None:
            assert math.isnan(recomputed[key])
        else:
            assert recomputed[key] == pytest.approx(stored["value"])


@pytest.mark.parametrize("name", NAMES)
def test_a_missing_label_column_lists_the_columns(name, tmp_path):
    task = get_task(name)
    folder = tmp_path / "data"
    shutil.copytree(DATA / name, folder)
    test = next(folder.glob("test.*"))
    frame = pd.read_json(test, lines=True) if test.suffix == ".jsonl" else pd.read_csv(test)
    frame = frame.drop(columns=[task.label_column])
    test.unlink()
    frame.to_csv(folder / "test.csv", index=False)
    with pytest.raises(CdsbiasError) as error:
        task(data_dir=folder).load()
    message = str(error.value)
    assert f"no column '{task.label_column}'" in message and str(folder / "test.csv") in message
    assert "its columns: " + ", ".join(frame.columns) in message


@pytest.mark.parametrize("name", NAMES)
def test_unknown_option_is_a_clear_error(name):
    with pytest.raises(CdsbiasError, match="Did you mean 'n_resamples'"):
        get_task(name)({"n_resample": 3})


def test_no_task_names_outside_the_downstream_package():
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, NAMES)) + r")(?![\w-])")
    hits = []
    for file in sorted((REPO / "cdsbias").rglob("*.py")):
        if "downstream" in file.relative_to(REPO / "cdsbias").parts[:1]:
            continue
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{file.relative_to(REPO)}:{number}: {line.strip()}")
    assert not hits, "task names outside cdsbias/downstream/:\n" + "\n".join(hits)


# ------------------------------------------------------------------------ fine-tuning
def test_the_same_seed_gives_identical_predictions(bert, tmp_path):
    _run(bert, "bias_in_bios", tmp_path / "a", seeds=(0,))
    _run(bert, "bias_in_bios", tmp_path / "b", seeds=(0,))
    a = (tmp_path / "a" / "bias_in_bios" / ROWS_FILE).read_text()
    b = (tmp_path / "b" / "bias_in_bios" / ROWS_FILE).read_text()
    assert a == b


def test_bias_in_bios_metrics_are_finite_after_fine_tuning(bert, tmp_path):
    config = FinetuneConfig(learning_rate=5e-3, max_steps=12, batch_size=8, max_length=32)
    summary = _run(bert, "bias_in_bios", tmp_path, seeds=(0,), config=config,
                   options={"n_resamples": 50, "min_group_examples": 2})  # fmt: skip
    metrics = summary["results"][0]["metrics"]
    for key in ("accuracy", "macro_f1", "tpr_gap_rms"):
        assert math.isfinite(metrics[key]["value"]), key
    assert summary["data"]["n_train"] == 24 and summary["results"][0]["notes"] == []


def test_too_few_examples_of_a_gender_leave_the_occupation_out_with_a_warning(bert):
    task = get_task("bias_in_bios")({"min_group_examples": 3, "n_resamples": 0},
                                    DATA / "bias_in_bios")  # fmt: skip
    splits = task.load()
    rows = splits["test"].assign(example=range(18), seed=0, prediction=0)
    # Nurses: 2 men; engineers: 2 women; teachers: 3 of each (kept).
    left = r"2 occupation\(s\) left out .*: 0 \(2 male, 4 female\), 1 \(4 male, 2 female\);"
    with pytest.warns(UserWarning, match=left):
        summary = task.summarize(rows)
    assert len(summary["notes"]) == 1
    assert task.per_group(rows) == {"2": {"tpr_gap": 0.0, "share_women": 0.5}}


def test_scrub_removes_names_and_gendered_words():
    from cdsbias.downstream.bias_in_bios import scrub

    assert scrub("Mary is a nurse and she loves her husband.") == "is a nurse and loves ."
    assert scrub("John Smith, an engineer; his wife") == "Smith, an engineer;"


# --------------------------------------------------------------------- post-hoc variants
def _erasure(size: int, seed: int = 0):
    from cdsbias.methods.erasure import AffineErasure

    direction = np.random.default_rng(seed).normal(size=size)
    direction /= np.linalg.norm(direction)
    projection = np.eye(size) - np.outer(direction, direction)
    erasure = AffineErasure("sentence_debias", projection, np.zeros(size), 1)
    return erasure, direction


def _encoded(tokenizer, texts):
    return tokenizer(texts, return_tensors="pt", padding=True)


def test_hook_keeps_the_projection_during_fine_tuning_and_fold_needs_no_hook(bert, tmp_path):
    import torch

    from cdsbias.scoring.loading import load_masked_lm

    # A posthoc_apply: hook run folder: loading attaches the map; the variants take over.
    folder = tmp_path / "debiased"
    shutil.copytree(bert, folder)
    erasure, direction = _erasure(32)
    erasure.details["posthoc_apply"] = "hook"
    erasure.save(folder)
    masked_lm, tokenizer = load_masked_lm(folder, progress=False)
    task = get_task("bias_in_bios")({"n_resamples": 0}, DATA / "bias_in_bios")
    splits = task.load()
    batch = _encoded(tokenizer, ["she is a nurse.", "he is an engineer and had a good day."])

    # At initialisation, fold and hook give the same logits.
    first = {}
    for variant in ("fold", "hook"):
        model = prepared_classifier(masked_lm, task, 0, QUICK, variant, erasure, "m").eval()
        with torch.no_grad():
            first[variant] = model(**batch).logits
    torch.testing.assert_close(first["fold"], first["hook"], rtol=1e-5, atol=1e-6)

    trained = {}
    for variant in ("fold", "hook"):
        result = finetune_and_predict(
            masked_lm,
            tokenizer,
            task,
            splits,
            seed=0,
            config=QUICK,
            variant=variant,
            erasure=erasure,
            keep_model=True,
        )
        trained[variant] = result.model.eval()  # fmt: skip
    with torch.no_grad():
        hooked = trained["hook"].encoder(**batch)[0].double().numpy()
        folded = trained["fold"].encoder(**batch)[0].double().numpy()
    # The hook was active through training and stays on: no component along the direction.
    assert np.abs(hooked @ direction).max() < 1e-5
    assert trained["hook"].encoder._forward_hooks
    # The folded classifier runs without any hook; its encoder keeps the direction.
    assert not trained["fold"].encoder._forward_hooks
    assert np.abs(folded @ direction).max() > 1e-3
    # Training moved the encoder, and the loaded model was left untouched.
    original = dict(masked_lm.base_model.named_parameters())
    moved = dict(trained["hook"].encoder.named_parameters())
    assert any(not torch.equal(original[k], moved[k]) for k in original)
    assert masked_lm.base_model._forward_hooks  # the loaded model keeps its own hook


def test_a_model_with_a_projection_runs_both_variants(bert, tmp_path):
    folder = tmp_path / "debiased"
    shutil.copytree(bert, folder)
    erasure, _ = _erasure(32)
    erasure.details["posthoc_apply"] = "fold"
    erasure.save(folder)
    summary = run_downstream([str(folder)], "bias_in_bios", tmp_path / "out", seeds=(0,),
                             data_dir=DATA / "bias_in_bios", config=QUICK,
                             options={"n_resamples": 20})  # fmt: skip
    assert [entry["variant"] for entry in summary["results"]] == ["fold", "hook"]


# -------------------------------------------------------------------------- bad input
def _cli(capsys, *args: str) -> tuple[int, str]:
    code = main(["downstream", *args])
    return code, capsys.readouterr().err


def test_unknown_task_suggests_the_closest(capsys, tmp_path, bert):
    code, err = _cli(capsys, str(bert), "--task", "bias_in_bio", "--out", str(tmp_path / "o"))
    assert code == 2
    assert "Unknown downstream task 'bias_in_bio'. Did you mean 'bias_in_bios'?" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_missing_column_fails_before_anything_is_written(capsys, tmp_path, bert):
    data = tmp_path / "data"
    shutil.copytree(DATA / "bias_in_bios", data)
    frame = pd.read_json(data / "train.jsonl", lines=True).drop(columns=["gender"])
    (data / "train.jsonl").write_text(frame.to_json(orient="records", lines=True))
    code, err = _cli(capsys, str(bert), "--task", "bias_in_bios", "--data", str(data),
                     "--out", str(tmp_path / "o"))  # fmt: skip
    assert code == 2 and "has no column 'gender'" in err
    assert "its columns: hard_text, profession" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_a_model_without_an_encoder_is_refused(capsys, tmp_path):
    from transformers import GPT2Config

    folder = tmp_path / "gpt2"
    GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=50).save_pretrained(folder)
    code, err = _cli(capsys, str(folder), "--task", "bias_in_bios", "--data",
                     str(DATA / "bias_in_bios"), "--out", str(tmp_path / "o"))  # fmt: skip
    assert code == 2 and "has no masked-LM head class" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_the_command_prints_the_table_and_writes_the_folder(capsys, tmp_path, bert):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(
            ["downstream", str(bert), "--task", "bias_in_bios", "--data",
             str(DATA / "bias_in_bios"), "--out", str(tmp_path), "--seeds", "1",
             "--max-steps", "2", "--batch-size", "8", "--option", "n_resamples=10"]
        )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "| model | variant | accuracy |" in out
    assert (tmp_path / "bias_in_bios" / SUMMARY_FILE).is_file()


# --------------------------------------------------------------------- architectures
ARCHITECTURES = ("distilbert", "roberta", "albert", "electra", "xlm-roberta", "deberta-v2",
                 "modernbert")  # fmt: skip


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_every_architecture_gets_a_head_and_both_variants(architecture, tmp_path):
    import torch

    from cdsbias.scoring.loading import load_masked_lm

    folder = tiny_masked_lm(architecture, tmp_path / architecture)
    masked_lm, tokenizer = load_masked_lm(folder, progress=False)
    task = get_task("stsb")({"n_resamples": 0}, DATA / "stsb")
    splits = task.load()
    one_step = FinetuneConfig(learning_rate=1e-3, max_steps=1, batch_size=4, max_length=32)
    result = finetune_and_predict(masked_lm, tokenizer, task, splits, seed=0, config=one_step)
    assert result.steps == 1 and np.isfinite(result.predictions).all()
    size = int(getattr(masked_lm.config, "hidden_size", 0) or masked_lm.config.dim)
    erasure, _ = _erasure(size)
    batch = _encoded(tokenizer, ["she had a good day.", "he is a nurse."])
    logits = []
    for variant in ("fold", "hook"):
        model = prepared_classifier(masked_lm, task, 0, one_step, variant, erasure, "m").eval()
        with torch.no_grad():
            logits.append(model(**batch).logits)
    torch.testing.assert_close(logits[0], logits[1], rtol=1e-4, atol=1e-5)
