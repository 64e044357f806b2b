"""A model card states only what the run folder shows, and names no path of this machine.

Two smoke runs on a user's attribute file (``age.tsv``, three groups): CDS, and LEACE
applied by a hook without training. Their published card and upload folder hold none of
the run's local paths; with the attribute file moved, the cards still name the axis and its
groups; without ``recipe.yaml`` publishing is one error naming it, and nothing is written
(before: a card claiming CDS p = 0.5 and full fine-tuning, the defaults).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_methods_contract import axis_run_keys
from test_refused_outputs import one_error
from tests_helpers import SMOKE, overrides

from cdsbias.cli import main

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
]
#: Recipe keys of each run beside the axis's corpus (tests/test_methods_contract.py).
RUNS = {
    "cds": ["max_steps=2"],
    "leace-hook": ["posthoc_method=leace", "posthoc_apply=hook", "posthoc_only=true",
                   "posthoc_min_sentences_per_class=5"],
}  # fmt: skip


@pytest.fixture(scope="module")
def age_runs(tmp_path_factory, becpro, base) -> dict[str, Path]:
    """``{name: run folder}``; every input (axis file, corpus, base model, BEC-Pro file)
    and every output sits below one local folder."""
    from cdsbias.train.config import load_recipe
    from cdsbias.train.run import run

    root = tmp_path_factory.mktemp("home-user")
    local_base, local_becpro = root / "base", root / "becpro.tsv"
    shutil.copytree(base, local_base)
    shutil.copy(becpro, local_becpro)
    runs = {}
    for name, keys in RUNS.items():
        given = overrides(root / name, local_becpro, "init_from_scratch=false",
                          f"model_name_or_path={local_base}", *keys,
                          *axis_run_keys("user", root))  # fmt: skip
        given = [k for k in given if not k.startswith("occupation_sentences=")]
        runs[name] = run(load_recipe(SMOKE, given))
    return runs


def publish_argv(run: Path, out: Path) -> list[str]:
    return ["publish", str(run), "--repo-id", "me/age-model", "--dry-run", "--out", str(out)]


def publish(run: Path, out: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(publish_argv(run, out))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", list(RUNS))
def test_no_card_or_upload_file_names_a_local_path(name, age_runs, tmp_path, capsys):
    run = age_runs[name]
    out = tmp_path / "upload"
    code, err = publish(run, out, capsys)
    assert code == 0, err
    local = str(run.parent)  # the axis file, corpus, base model and run are all below it
    leaks = [p.name for p in sorted(out.rglob("*")) if p.is_file() and local.encode() in
             p.read_bytes()]  # fmt: skip
    assert not leaks, f"{leaks} name {local}"
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Debiased for: **age** (word lists: file)." in card
    if name == "leace-hook":
        assert "bias axis age: young, middle, old" in card


@pytest.mark.parametrize("name", list(RUNS))
def test_a_moved_axis_file_still_gives_the_axis_on_the_card(name, age_runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(age_runs[name], run)
    axis_file = age_runs[name].parent / "age.tsv"
    moved = tmp_path / "age.tsv"
    shutil.move(axis_file, moved)
    try:
        code, err = publish(run, tmp_path / "upload", capsys)
    finally:
        shutil.move(moved, axis_file)
    assert code == 0, err
    card = (tmp_path / "upload" / "README.md").read_text(encoding="utf-8")
    assert "Debiased for: **age** (word lists: file)." in card
    assert "gender: male, female" not in card
    if name == "leace-hook":
        assert "bias axis age: young, middle, old" in card
    else:
        assert "'age' axis" in card


@pytest.mark.parametrize("name", list(RUNS))
def test_without_its_recipe_a_run_is_not_published(name, age_runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(age_runs[name], run)
    (run / "recipe.yaml").unlink()
    out = tmp_path / "upload"
    error = one_error(capsys, publish_argv(run, out), guarded=run)
    assert f"{run / 'recipe.yaml'} is missing" in error
    assert not out.exists()
    # The same through the run's own default folder: nothing is made.
    code, err = publish_default(run, capsys)
    assert code == 2 and not (run / "publish").exists(), err


def publish_default(run: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["publish", str(run), "--repo-id", "me/age-model", "--dry-run"])
    return code, capsys.readouterr().err


def test_compare_refuses_a_run_without_its_recipe(age_runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(age_runs["cds"], run)
    (run / "recipe.yaml").unlink()
    capsys.readouterr()
    assert main(["compare", str(age_runs["leace-hook"]), str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run / 'recipe.yaml'} is missing") and err.count("\n") == 1


def _cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


#: A damaged record of the run folder -> the file the error names (relative to the run).
DAMAGED = {
    "recipe cut short": "recipe.yaml",
    "run_info cut short": "run_info.json",
    "a benchmark summary cut short": "bias/step-0/becpro/summary.json",
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_record_is_one_error_naming_it(damage, age_runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(age_runs["leace-hook"], run)
    damaged = run / DAMAGED[damage]
    _cut(damaged)
    out = tmp_path / "upload"
    error = one_error(capsys, publish_argv(run, out), guarded=run)
    assert f"{damaged} cannot be read" in error
    assert not out.exists()
