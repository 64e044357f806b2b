"""The training recipe: config errors, a smoke run end to end, publishing, resume after SIGKILL."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from tests_helpers import assert_same_points, kill_after_checkpoint

from cdsbias.errors import CdsbiasError
from cdsbias.runs.points import read_points
from cdsbias.train.config import load_recipe
from cdsbias.train.run import main as train_main

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "recipes" / "smoke.yaml"


def smoke_args(shared_data: Path, output_dir: Path, *extra: str) -> list[str]:
    return [
        str(SMOKE),
        f"output_dir={output_dir}",
        f"data_dir={shared_data}",
        f"bias_data_dir={shared_data}",
        *extra,
    ]


# ------------------------------------------------------------------ configuration
def test_unknown_key_names_the_closest(tmp_path):
    with pytest.raises(
        CdsbiasError, match=r"Unknown recipe key 'learning_rat'\. Did you mean 'learning_rate'"
    ):
        load_recipe(SMOKE, ["learning_rat=1e-4"])


def test_unknown_key_in_yaml(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("output_dir: x\ncds_probabilty: 0.5\n")
    with pytest.raises(CdsbiasError, match="Did you mean 'cds_probability'"):
        load_recipe(recipe)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("learning_rate=fast", "'learning_rate' expects a number"),
        ("max_steps=1.5", "'max_steps' expects an integer"),
        ("cds_names=maybe", "'cds_names' expects true or false"),
        ("cds_probability=1.5", "cds_probability must be in"),
        ("bias_benchmarks=[bec-pro]", "Unknown benchmark 'bec-pro'. Did you mean 'becpro'"),
    ],
)
def test_wrong_values(override, message):
    with pytest.raises(CdsbiasError, match=message):
        load_recipe(SMOKE, [override])


def test_missing_recipe_file(tmp_path):
    with pytest.raises(CdsbiasError, match="does not exist"):
        load_recipe(tmp_path / "nope.yaml")


def test_overrides_are_applied_and_typed():
    recipe = load_recipe(SMOKE, ["learning_rate=3e-4", "bias_benchmarks=becpro", "max_steps=2"])
    assert recipe.training.learning_rate == pytest.approx(3e-4)
    assert recipe.bias.bias_benchmarks == {"becpro": {}}
    assert recipe.training.max_steps == 2
    assert recipe.model.init_from_scratch is True


def test_bias_benchmarks_as_a_mapping_of_options(tmp_path):
    recipe_file = tmp_path / "r.yaml"
    recipe_file.write_text(
        "output_dir: x\ninit_from_scratch: true\nbias_n_resamples: 300\n"
        "bias_benchmarks:\n  becpro: {n_resamples: 2000, mask_per: piece}\n"
        "  dawinobias: {}\n  abc: {scoring: pll}\n  kurita:\n"
    )
    recipe = load_recipe(recipe_file)
    becpro, dawinobias, abc, kurita = recipe.bias.build_benchmarks()
    assert becpro.options.n_resamples == 2000 and becpro.options.mask_per == "piece"
    assert abc.options.scoring == "pll" and abc.options.n_resamples == 300
    # Each benchmark takes its own language: Danish for the Danish ones, English otherwise.
    assert (becpro.language, dawinobias.language, abc.language, kurita.language) == (
        "en",
        "da",
        "da",
        "en",
    )
    # The list form and a comma-separated override mean the same.
    listed = load_recipe(recipe_file, ["bias_benchmarks=[becpro, kurita]"])
    assert listed.bias.bias_benchmarks == {"becpro": {}, "kurita": {}}


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ("{becpro: {n_resample: 5}}", "Unknown becpro option 'n_resample'. Did you mean"),
        ("{becpro: {mask_per: pieces}}", "'mask_per' must be one of word, piece"),
        ("{becpro: 3}", "the options of 'becpro' must be a mapping"),
        ("{dawinobias: {language: en}}", "'dawinobias' has no 'en' data; it supports da"),
    ],
)
def test_bias_benchmark_options_are_checked_at_load_time(mapping, message):
    with pytest.raises(CdsbiasError, match=message):
        load_recipe(SMOKE, [f"bias_benchmarks={mapping}"])


def test_a_language_no_benchmark_supports_is_an_error():
    with pytest.raises(CdsbiasError, match="'becpro' has no 'da' data; it supports en, de"):
        load_recipe(SMOKE, ["bias_language=da"])


def test_named_model_with_init_from_scratch_is_an_error(tmp_path):
    with pytest.raises(
        CdsbiasError,
        match=r"model_name_or_path=roberta-dir \(on the command line\)"
        r" conflicts with init_from_scratch: true.*init_from_scratch=false",
    ):
        load_recipe(SMOKE, ["model_name_or_path=roberta-dir"])
    fine_tune = load_recipe(SMOKE, ["model_name_or_path=roberta-dir", "init_from_scratch=false"])
    assert fine_tune.model.init_from_scratch is False


def test_from_scratch_keys_when_fine_tuning_warn_with_the_fix():
    with pytest.warns(UserWarning, match="model_config, tokenizer_vocab_size only shape"):
        load_recipe(SMOKE, ["init_from_scratch=false", "model_name_or_path=some/model"])


def test_gap_cds_recipe_reproduces_the_published_setup():
    recipe = load_recipe(REPO / "recipes" / "gap_cds.yaml")
    assert recipe.model.model_name_or_path == "bert-base-uncased"
    assert recipe.cds.cds_probability == 1.0 and recipe.cds.cds_mode == "cds"
    assert recipe.training.num_train_epochs == 3
    assert recipe.training.learning_rate == pytest.approx(2e-5)
    assert getattr(recipe.training.lr_scheduler_type, "value", None) == "linear"
    assert recipe.data.splits == ["development", "test", "validation"]
    first_line = (REPO / "recipes" / "gap_cds.yaml").read_text().splitlines()[0]
    assert first_line.startswith("#")


def test_output_dir_holding_another_run_is_not_overwritten(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "bias_metrics.jsonl").write_text('{"step": 0}\n')
    assert train_main([str(SMOKE), f"output_dir={out}"]) == 2
    assert "holds another run; nothing was overwritten" in capsys.readouterr().err
    assert (out / "bias_metrics.jsonl").read_text() == '{"step": 0}\n'


def test_missing_training_data_is_a_clear_error(tmp_path, capsys):
    code = train_main([str(SMOKE), f"output_dir={tmp_path / 'o'}", f"data_dir={tmp_path}"])
    assert code == 2
    assert "run `cdsbias data fetch gap`" in capsys.readouterr().err


def test_unloadable_model_offline(tmp_path, capsys, monkeypatch, shared_data):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code = train_main(
        smoke_args(shared_data, tmp_path / "o", "init_from_scratch=false",
                   "model_name_or_path=someone/missing-model")
    )  # fmt: skip
    assert code == 2
    assert "Cannot load model 'someone/missing-model'" in capsys.readouterr().err


# ------------------------------------------------------------------ smoke run
@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory, shared_data):
    """One smoke training run (W&B offline) shared by the assertions below."""
    import torch
    from transformers import AutoModelForMaskedLM

    out = tmp_path_factory.mktemp("smoke") / "run"
    os.environ["WANDB_MODE"] = "offline"
    # Initial weights: the same seeded construction the run performs.
    recipe = load_recipe(SMOKE, smoke_args(shared_data, out)[1:])
    from cdsbias.train.run import build_model

    initial, _ = build_model(recipe)
    initial_state = {k: v.clone() for k, v in initial.state_dict().items()}
    code = train_main(
        smoke_args(shared_data, out, "max_steps=4", "save_steps=2", "report_to=wandb")
    )
    assert code == 0
    final = AutoModelForMaskedLM.from_pretrained(out)
    return out, initial, initial_state, final, torch


def test_smoke_every_trainable_parameter_changes(smoke_run):
    _, initial, initial_state, final, torch = smoke_run
    trainable = {name for name, p in initial.named_parameters() if p.requires_grad}
    final_state = final.state_dict()
    unchanged = [n for n in trainable if torch.equal(initial_state[n], final_state[n])]
    assert not unchanged


def test_smoke_curve_has_step_zero_and_every_checkpoint(smoke_run):
    out = smoke_run[0]
    points = read_points(out)
    assert [p["step"] for p in points] == [0, 2, 4]
    for p in points:
        assert np.isfinite(p["heldout_loss"])
        assert "gap_male" in p["benchmarks"]["becpro"]["metrics"]
    assert (out / "bias_curve.png").stat().st_size > 10_000
    for step in (2, 4):
        summary = json.loads((out / f"checkpoint-{step}" / "bias_summary.json").read_text())
        assert summary["step"] == step and "becpro" in summary["benchmarks"]
        assert (out / "bias" / f"step-{step}" / "becpro" / "rows.tsv").exists()
    assert (out / "bias" / "step-0" / "becpro" / "summary.json").exists()


def test_smoke_wandb_offline_run_exists(smoke_run):
    out = smoke_run[0]
    runs = list((out / "wandb").glob("offline-run-*"))
    assert runs and any(runs[0].glob("*.wandb"))


def test_smoke_checkpoint_reloads_and_scores(smoke_run):
    from cdsbias.scoring import MaskedLMScorer

    out = smoke_run[0]
    scorer = MaskedLMScorer.from_pretrained(str(out / "checkpoint-4"))
    assert np.isfinite(scorer.target_log_probs(["[MASK] is a nurse."], ["she"])[0])


def test_publish_dry_run_builds_the_exact_folder(smoke_run, capsys):
    from transformers import AutoModelForMaskedLM

    from cdsbias.cli import main

    out = smoke_run[0]
    target = out / "to-upload"
    code = main(["publish", str(out / "checkpoint-4"), "--repo-id", "org/smoke-cds",
                 "--dry-run", "--out", str(target)])  # fmt: skip
    assert code == 0
    card = (target / "README.md").read_text()
    assert card.startswith("---\n") and "pipeline_tag: fill-mask" in card
    assert "license: apache-2.0" in card and "datasets:" in card and "tags:" in card
    assert "| male |" in card and "Held-out MLM loss" in card and "bias_curve.png" in card
    assert (target / "bias_curve.png").exists()
    assert not (target / "optimizer.pt").exists()
    AutoModelForMaskedLM.from_pretrained(target)
    # The hub's structured results round-trip: every headline metric, before and after.
    from huggingface_hub import ModelCard

    loaded = ModelCard.load(target / "README.md")
    results = loaded.data.eval_results
    steps = {(r.dataset_type, r.metric_type, r.metric_args["step"]) for r in results}
    assert ("bec-pro", "mean_abs_gap", 0) in steps and ("bec-pro", "mean_abs_gap", 4) in steps
    assert loaded.data.datasets == ["google-research-datasets/gap"]
    assert loaded.data.base_model is None  # a from-scratch model has no base
    # The recipe block shows what shaped the model, not this machine's paths.
    assert "data_dir" not in card and "output_dir" not in card and str(out) not in card
    assert "model_config" in card  # from scratch: the architecture did shape it


def test_publishing_a_run_folder_uploads_no_record_of_this_machine(smoke_run, tmp_path):
    from cdsbias.cli import main

    out = smoke_run[0]
    target = tmp_path / "upload"
    assert main(["publish", str(out), "--repo-id", "org/x", "--dry-run", "--out", str(target)]) == 0
    names = {p.name for p in target.iterdir()}
    assert "model.safetensors" in names and "README.md" in names
    assert not names & {"recipe.yaml", "run_info.json", "trainer_state.json"}
    for path in target.iterdir():
        if path.suffix in (".json", ".md", ".jsonl", ".yaml", ".txt"):
            assert str(out) not in path.read_text(encoding="utf-8"), path.name


def test_publish_upload_failure_keeps_the_folder(smoke_run, capsys, monkeypatch):
    from cdsbias.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = smoke_run[0]
    target = out / "to-upload-2"
    code = main(["publish", str(out / "checkpoint-2"), "--repo-id", "org/x", "--out", str(target)])
    err = capsys.readouterr().err
    assert code == 2
    assert "failed" in err and "the folder is intact" in err
    assert (target / "README.md").exists() and (target / "model.safetensors").exists()


def test_publish_bad_repo_id(smoke_run, capsys):
    from cdsbias.cli import main

    assert main(["publish", str(smoke_run[0]), "--repo-id", "no-slash", "--dry-run"]) == 2
    assert "ORG/NAME" in capsys.readouterr().err


# ------------------------------------------------------------------ resume
@pytest.mark.slow
def test_resume_after_sigkill_matches_uninterrupted_run(tmp_path, shared_data):
    """SIGKILL right after checkpoint-2 is written, resume: same curve, same final metrics."""
    common = ["max_steps=6", "save_steps=2", "report_to=none"]
    full = tmp_path / "full"
    assert train_main(smoke_args(shared_data, full, *common)) == 0

    killed = tmp_path / "killed"
    kill_after_checkpoint(smoke_args(shared_data, killed, *common), killed, step=2)
    assert not (killed / "checkpoint-6").exists()

    assert train_main(smoke_args(shared_data, killed, *common, "resume_from_checkpoint=true")) == 0
    assert_same_points(full, killed, [0, 2, 4, 6])
