"""A damaged run folder is an error, never silently something else (issue 26, item 3).

A ``posthoc_apply: hook`` run whose ``posthoc_fit.json`` is cut short, whose map is missing
or cut short, or whose ``model.safetensors``, ``config.json`` or ``tokenizer.json`` is cut
short: ``cdsbias evaluate``, ``cdsbias
publish --dry-run`` and ``train.py`` on it each exit non-zero with one ``error:`` line
naming the file, no traceback, and nothing written. (Before: evaluate scored the weights
without the hook, publish built a folder without the map, and a cut-short file printed a
safetensors or JSON traceback.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests_helpers import SMOKE, fine_tune, overrides

from cdsbias.cli import main as cli
from cdsbias.methods.erasure import ERASURE_FILE, ERASURE_RECORD
from cdsbias.train.run import main as train_main

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
]


@pytest.fixture(scope="module")
def hook_run(tmp_path_factory, becpro, base) -> Path:
    out = tmp_path_factory.mktemp("hook") / "run"
    return fine_tune(out, becpro, base, "posthoc_method=leace", "posthoc_apply=hook",
                     "posthoc_only=true", "posthoc_word_pairs=pronoun_pairs.json",
                     "posthoc_min_sentences_per_class=5")  # fmt: skip


def cut(path: Path) -> None:
    """Keeps the first half of the file, as an interrupted copy does."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


#: damage -> (what it does to the run folder, the file the error names, words of the error).
DAMAGES = {
    "record cut short": (lambda f: cut(f / ERASURE_RECORD), ERASURE_RECORD, "cannot be read"),
    "map missing": (lambda f: (f / ERASURE_FILE).unlink(), ERASURE_FILE, "is missing"),
    "map cut short": (lambda f: cut(f / ERASURE_FILE), ERASURE_FILE, "damaged or cut short"),
    "weights cut short": (
        lambda f: cut(f / "model.safetensors"),
        "model.safetensors",
        "damaged or cut short",
    ),
    "config cut short": (lambda f: cut(f / "config.json"), "config.json", "cannot be read"),
    "tokenizer cut short": (
        lambda f: cut(f / "tokenizer.json"),
        "tokenizer.json",
        "cannot be read",
    ),
    "map without record": (
        lambda f: (f / ERASURE_RECORD).unlink(),
        ERASURE_FILE,
        f"without {ERASURE_RECORD}",
    ),
}


def command(name: str, folder: Path, out: Path, becpro: Path) -> tuple:
    """The entry point and argv of ``name`` run on ``folder``, writing under ``out``."""
    if name == "evaluate":
        return cli, ["evaluate", str(folder), "-b", "becpro", "--data", str(becpro), "--out",
                     str(out), "--quiet"]  # fmt: skip
    if name == "publish":
        return cli, ["publish", str(folder), "--repo-id", "me/model", "--dry-run", "--out",
                     str(out)]  # fmt: skip
    keys = overrides(out, becpro, "init_from_scratch=false", f"model_name_or_path={folder}")
    return train_main, [str(SMOKE), *keys]


@pytest.mark.parametrize("name", ["evaluate", "publish", "train"])
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_hooked_run_is_one_error_naming_the_file(
    hook_run, becpro, tmp_path, capsys, damage, name
):
    folder = tmp_path / "damaged"
    shutil.copytree(hook_run, folder)
    change, named, words = DAMAGES[damage]
    change(folder)
    kept = sorted(p.name for p in folder.rglob("*"))
    out = tmp_path / "out"
    main, argv = command(name, folder, out, becpro)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert str(folder / named) in errors[0] and words in errors[0], errors[0]
    assert not out.exists()
    assert sorted(p.name for p in folder.rglob("*")) == kept  # e.g. no publish/ folder


@pytest.fixture(scope="module")
def checkpointed(tmp_path_factory, becpro, base) -> Path:
    """A finished 2-step run with its checkpoint-2, to resume from."""
    return fine_tune(tmp_path_factory.mktemp("resume") / "run", becpro, base)


@pytest.mark.parametrize(
    ("name", "words"),
    [("model.safetensors", "is damaged or cut short"), ("trainer_state.json", "cannot be read")],
)
def test_resuming_from_a_cut_short_checkpoint_names_its_file(
    checkpointed, becpro, base, tmp_path, capsys, name, words
):
    run = tmp_path / "run"
    shutil.copytree(checkpointed, run)
    damaged = run / "checkpoint-2" / name
    cut(damaged)
    keys = overrides(run, becpro, "init_from_scratch=false", f"model_name_or_path={base}",
                     "resume_from_checkpoint=true", "max_steps=4")  # fmt: skip
    before = sorted(p.name for p in run.rglob("*"))
    capsys.readouterr()
    assert train_main([str(SMOKE), *keys]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert f"{damaged} {words}" in errors[0]
    assert "resume_from_checkpoint=FOLDER" in errors[0]
    assert sorted(p.name for p in run.rglob("*")) == before


def test_a_cut_short_bias_metrics_line_is_named(hook_run, tmp_path, capsys):
    folder = tmp_path / "damaged"
    shutil.copytree(hook_run, folder)
    metrics = folder / "bias_metrics.jsonl"
    metrics.write_text(metrics.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    assert cli(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {metrics} is not valid run output: ") and err.count("\n") == 1
