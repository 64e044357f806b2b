"""No command writes over earlier results, and each bad input of issue 37 is one error line.

Every command that takes ``--out`` checks the paths it will write through one owner
(:func:`cdsbias.io.check_output`) before it reads anything: earlier results are refused
unless ``--overwrite`` is given, a file where a folder is needed (or the reverse) is named.
Each case exits 2 with one ``error:`` line and no traceback, and the guarded folder's
SHA-256 (every path and byte under it) is the same before and after.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import ASSETS
from tests_helpers import SMOKE

from cdsbias.cli import main
from cdsbias.errors import CdsbiasError, shown

pytestmark = pytest.mark.usefixtures("one_thread")
DOWNSTREAM = ASSETS / "downstream"


def tree_sha256(folder: Path) -> str:
    """SHA-256 over every path (relative) and file's bytes under ``folder``."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def one_error(capsys, argv: list[str], guarded: Path | None = None) -> str:
    """Runs the CLI; asserts exit 2, one ``error:`` line, no traceback and (``guarded``)
    the folder's SHA-256 unchanged; returns the line."""
    before = tree_sha256(guarded) if guarded is not None else None
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    if guarded is not None:
        assert tree_sha256(guarded) == before, "the command changed the guarded folder"
    return lines[0]


def corpus(folder: Path) -> Path:
    path = folder / "religion.txt"
    path.write_text(
        "The Muslim family prayed at the mosque.\nThe weather was fine.\n", encoding="utf-8"
    )
    return path


# ---------------------------------------------------------------- earlier results kept
def _cds_axis(tmp: Path) -> tuple[list[str], Path]:
    source = corpus(tmp)
    out = tmp / "out" / "religion-cda"  # a save_to_disk folder
    argv = ["cds", str(source), "--axis", "religion", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    return argv, tmp / "out"


def _cds_gender_report(tmp: Path) -> tuple[list[str], Path]:
    source = corpus(tmp)
    out = tmp / "out" / "cds.jsonl"
    argv = ["cds", str(source), "--out", str(out), "--analyzer", "rules", "--quiet"]
    assert main(argv) == 0
    out.unlink()  # the report alone is still an earlier result
    return argv, tmp / "out"


def _cds_gap(tmp: Path) -> tuple[list[str], Path]:
    out = tmp / "out" / "gap-cds.tsv"
    argv = ["cds", str(ASSETS / "cds" / "gap_sample.tsv"), "--out", str(out), "--analyzer",
            "rules", "--probability", "1.0"]  # fmt: skip
    assert main(argv) == 0
    return argv, tmp / "out"


def _evaluate(tmp: Path, model: Path, becpro: Path) -> tuple[list[str], Path]:
    out = tmp / "out"
    argv = ["evaluate", str(model), "-b", "becpro", "--data", str(becpro), "--out", str(out),
            "--option", "n_resamples=20", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    return argv, out


def _downstream(tmp: Path) -> tuple[list[str], Path]:
    out = tmp / "out"
    (out / "sst2").mkdir(parents=True)
    (out / "sst2" / "summary.json").write_text("{}\n", encoding="utf-8")
    # The model is never loaded: the refusal comes first.
    argv = ["downstream", str(tmp / "no-model"), "--task", "sst2", "--data",
            str(DOWNSTREAM / "sst2"), "--out", str(out)]  # fmt: skip
    return argv, out


def _compare(tmp: Path) -> tuple[list[str], Path]:
    out = tmp / "out"
    out.mkdir()
    (out / "comparison.md").write_text("| earlier |\n", encoding="utf-8")
    return ["compare", str(tmp / "run-a"), str(tmp / "run-b"), "--out", str(out)], out


def _publish(tmp: Path) -> tuple[list[str], Path]:
    (tmp / "run").mkdir()
    out = tmp / "out"
    out.mkdir()
    (out / "README.md").write_text("my own notes\n", encoding="utf-8")
    return ["publish", str(tmp / "run"), "--repo-id", "me/m", "--dry-run", "--out", str(out)], out


@pytest.mark.parametrize(
    "case", ["cds --axis", "cds report", "cds gap", "evaluate", "downstream", "compare", "publish"]
)
def test_earlier_results_are_refused_and_kept(case, tmp_path, capsys, tiny_bert, becpro):
    build = {
        "cds --axis": lambda: _cds_axis(tmp_path),
        "cds report": lambda: _cds_gender_report(tmp_path),
        "cds gap": lambda: _cds_gap(tmp_path),
        "evaluate": lambda: _evaluate(tmp_path, tiny_bert, becpro),
        "downstream": lambda: _downstream(tmp_path),
        "compare": lambda: _compare(tmp_path),
        "publish": lambda: _publish(tmp_path),
    }[case]
    argv, guarded = build()
    before = tree_sha256(guarded)
    error = one_error(capsys, argv)
    assert "already exists and holds earlier results" in error, error
    assert "pass --overwrite to replace it" in error and str(guarded) in error
    assert tree_sha256(guarded) == before


@pytest.mark.parametrize("case", ["cds --axis", "evaluate"])
def test_overwrite_replaces_them(case, tmp_path, tiny_bert, becpro):
    argv, guarded = (
        _cds_axis(tmp_path) if case == "cds --axis" else _evaluate(tmp_path, tiny_bert, becpro)
    )
    before = tree_sha256(guarded)
    assert main([*argv, "--overwrite"]) == 0
    assert not [p for p in guarded.iterdir() if p.name.startswith(".")]  # no staging left
    if case == "evaluate":  # a new summary (its timing differs), in the same place
        assert (guarded / "becpro" / "summary.json").is_file()
    else:
        assert tree_sha256(guarded) == before  # the same seeded output, rewritten


def test_an_empty_out_folder_is_written_into(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    argv = ["cds", str(corpus(tmp_path)), "--axis", "religion", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    assert (out / "dataset_info.json").is_file()


# ------------------------------------------------------------------ files and folders
@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("downstream", "is a file, not a folder"),
        ("evaluate", "is a file, not a folder"),
        ("compare", "is a file, not a folder"),
        ("publish", "is a file, not a folder"),
        ("demo-model", "is a file, not a folder"),
        ("data fetch", "is a file, not a folder"),
        ("cds inside a file", "is a file, so"),
    ],
)
def test_a_file_where_a_folder_is_needed_is_named(command, words, tmp_path, capsys):
    blocker = tmp_path / "results.txt"
    blocker.write_text("mine\n", encoding="utf-8")
    (tmp_path / "run").mkdir()
    argv = {
        "downstream": ["downstream", "m", "--task", "sst2", "--out", str(blocker)],
        "evaluate": ["evaluate", "m", "-b", "becpro", "--out", str(blocker)],
        "compare": ["compare", str(tmp_path / "run"), "--out", str(blocker)],
        "publish": ["publish", str(tmp_path / "run"), "--repo-id", "me/m", "--out", str(blocker)],
        "demo-model": ["demo-model", "--out", str(blocker)],
        "data fetch": ["data", "fetch", "gap", "--out", str(blocker)],
        "cds inside a file": ["cds", str(corpus(tmp_path)), "--out", str(blocker / "x.jsonl")],
    }[command]
    before = tree_sha256(tmp_path)
    error = one_error(capsys, argv)
    assert str(blocker) in error and words in error, error
    assert "Errno" not in error
    assert tree_sha256(tmp_path) == before


def test_demo_model_keeps_a_model_of_other_settings_and_any_other_folder(tmp_path, capsys):
    from cdsbias.demo.base_model import REPORT_FILE

    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / REPORT_FILE).write_text(json.dumps({"fingerprint": "other"}), encoding="utf-8")
    before = tree_sha256(tmp_path)
    error = one_error(capsys, ["demo-model", "--out", str(demo)])
    assert "built with other settings" in error and "--force" in error
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n", encoding="utf-8")
    before = tree_sha256(tmp_path)
    error = one_error(capsys, ["demo-model", "--out", str(mine), "--force"])
    assert "is not a demo model" in error
    assert tree_sha256(tmp_path) == before


# ------------------------------------------------------------------------- downstream
@pytest.fixture(scope="module")
def short_bert(tmp_path_factory) -> Path:
    """A tiny BERT with 8 positions: fewer than the fixture's longest input (12 tokens)."""
    from tiny_models import tiny_masked_lm

    return tiny_masked_lm("bert", tmp_path_factory.mktemp("short") / "bert", max_positions=8)


def test_max_length_beyond_the_model_positions_fails_before_fine_tuning(
    short_bert, tmp_path, capsys
):
    out = tmp_path / "out"
    argv = ["downstream", str(short_bert), "--task", "sst2", "--data", str(DOWNSTREAM / "sst2"),
            "--out", str(out), "--seeds", "1", "--max-steps", "1"]  # fmt: skip
    error = one_error(capsys, [*argv, "--max-length", "512"], tmp_path)
    assert "--max-length 512 is longer than" in error and "(8 positions)" in error
    assert "pass --max-length 8 or less" in error
    # The task's default (128) on inputs longer than the model reads: named with the fix.
    error = one_error(capsys, argv, tmp_path)
    assert "reads at most 8" in error and "pass --max-length 8" in error
    assert not out.exists()


def test_a_model_named_twice_is_refused(tmp_path, capsys, tiny_bert):
    out = tmp_path / "out"
    for second in (str(tiny_bert), f"{tiny_bert}/."):  # one folder named two ways too
        argv = ["downstream", str(tiny_bert), second, "--task", "sst2",
                "--data", str(DOWNSTREAM / "sst2"), "--out", str(out)]  # fmt: skip
        error = one_error(capsys, argv, tmp_path)
        assert "MODEL is the same model twice" in error and str(tiny_bert) in error
    assert not out.exists()


def test_sts_b_labels_outside_0_to_5_name_the_file_and_row(tmp_path, capsys):
    data = tmp_path / "stsb"
    data.mkdir()
    for split in ("train", "test"):
        frame = pd.read_json(DOWNSTREAM / "stsb" / f"{split}.jsonl", lines=True)
        if split == "train":
            frame.loc[3, "label"] = 7.5
        frame.to_json(data / f"{split}.jsonl", orient="records", lines=True)
    error = one_error(capsys, ["downstream", "m", "--task", "stsb", "--data", str(data),
                               "--out", str(tmp_path / "out")], tmp_path)  # fmt: skip
    assert f"{data / 'train.jsonl'}: row 4 has label 7.5, outside stsb's scale 0 to 5" in error


def test_class_ids_are_shown_as_numbers_not_numpy_reprs(tmp_path, capsys):
    data = tmp_path / "sst2"
    data.mkdir()
    for split in ("train", "test"):
        frame = pd.read_json(DOWNSTREAM / "sst2" / f"{split}.jsonl", lines=True)
        frame.loc[0, "label"] = -1
        frame.to_json(data / f"{split}.jsonl", orient="records", lines=True)
    error = one_error(capsys, ["downstream", "m", "--task", "sst2", "--data", str(data),
                               "--out", str(tmp_path / "out")], tmp_path)  # fmt: skip
    assert error.endswith("got -1.") and "np." not in error, error


def test_shown_gives_plain_numbers():
    import numpy as np

    assert repr(shown(np.int64(-1))) == "-1" and repr(shown(np.float32(0.5))) == "0.5"
    assert shown("x") == "x" and shown([1]) == [1]


def test_a_recipe_data_dir_is_named_by_its_key(tmp_path):
    from cdsbias.downstream.after_training import planned_tasks
    from cdsbias.train.config import load_recipe

    missing = tmp_path / "MISSING"
    keys = [f"output_dir={tmp_path / 'run'}", f"downstream_tasks={{sst2: {{data_dir: {missing}}}}}"]
    recipe = load_recipe(SMOKE, keys)
    with pytest.raises(CdsbiasError) as caught:
        planned_tasks(recipe)
    assert str(caught.value).startswith(f"downstream_tasks.sst2.data_dir {missing} is not a folder")
    assert "--data" not in str(caught.value)


# ----------------------------------------------------------------------- other inputs
def test_forms_in_another_order_suggest_the_canonical_spelling(tmp_path, capsys):
    error = one_error(capsys, ["cds", str(corpus(tmp_path)), "--forms", "neutral+binary",
                               "--out", str(tmp_path / "o.jsonl")], tmp_path)  # fmt: skip
    assert "Did you mean 'binary+neutral'?" in error
    assert not (tmp_path / "o.jsonl").exists()


def test_a_measured_axis_no_benchmark_scores_warns_with_the_fix(tmp_path, becpro):
    from cdsbias.train.config import load_recipe

    keys = [f"output_dir={tmp_path / 'run'}", "bias_axes=[religion]",
            f"bias_benchmarks={{becpro: {{data_file: {becpro}}}}}"]  # fmt: skip
    expected = (r"bias_axes names religion, but no benchmark of bias_benchmarks \(becpro\) "
                r"scores it.*add one that scores it \(crows_pairs, .*or drop it from "
                r"bias_axes\.")  # fmt: skip
    with pytest.warns(UserWarning, match=expected):
        load_recipe(SMOKE, keys)  # when the recipe is read, before anything runs
    # Measured by a benchmark with a religion category: no warning.
    recipe = load_recipe(SMOKE, [f"output_dir={tmp_path / 'run'}", "bias_axes=[gender, religion]",
                                 "bias_benchmarks=[crows_pairs]"])  # fmt: skip
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        recipe.bias.build_benchmarks(recipe.axis)


RELEASE = ASSETS / "pronoun_fidelity_misgendered"


@pytest.mark.parametrize(
    ("file", "damage", "words"),
    [
        ("pronouns.csv", "short", "pronouns.csv:3: 2 field(s), the header has 7"),
        ("pronouns.csv", "latin-1", "pronouns.csv is not UTF-8 text"),
        ("templates/parenth_template_2.csv", "short", "parenth_template_2.csv:3: 1 field(s)"),
        ("templates/explicit_template_32.csv", "latin-1", "explicit_template_32.csv is not UTF-8"),
        ("names/male.txt", "latin-1", "male.txt is not UTF-8 text"),
    ],
)
def test_a_damaged_release_csv_is_one_error_line(file, damage, words, tmp_path, capsys, tiny_bert):
    import shutil

    folder = tmp_path / "misgendered"
    shutil.copytree(RELEASE, folder)
    path = folder / file
    lines = path.read_bytes().split(b"\n")
    if damage == "short":
        lines[2] = b",".join(lines[2].split(b",")[: 2 if file == "pronouns.csv" else 1])
    else:
        lines[1] = "Zoë".encode("latin-1") + lines[1]
    path.write_bytes(b"\n".join(lines))
    out = tmp_path / "out"
    error = one_error(capsys, ["evaluate", str(tiny_bert), "-b", "pronoun_fidelity", "--data",
                               str(folder), "--out", str(out), "--quiet"], tmp_path)  # fmt: skip
    assert str(folder) in error and words in error, error
    assert not out.exists()
