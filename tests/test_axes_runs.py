"""Several bias axes in one run: keys that name the axis, the cross-axis matrix of
``cdsbias compare``, the model card's axes, and ``cdsbias evaluate --axis``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from test_bench_axes import axis_fixtures, axis_run_benchmarks

from cdsbias.axes import get_axis
from cdsbias.benchmarks import result_folder_name
from cdsbias.cli import main
from cdsbias.runs.compare import compare

pytestmark = pytest.mark.filterwarnings("ignore::cdsbias.scoring.language.LanguageMismatchWarning")
SCORE = {"key": "metric_score", "label": "% stereotype preferred (religion)", "unit": "%",
         "better": "closer", "ideal": 50.0}  # fmt: skip


# ------------------------------------------------------------------ the matrix, known numbers
def _fake_run(folder: Path, bias_axis: str, values: dict[str, tuple]) -> Path:
    """Two points (steps 0 and 10); ``values``: axis -> (before, after, ci before, ci after)."""
    folder.mkdir(parents=True)
    points = []
    for index, step in enumerate((0, 10)):
        benchmarks = {
            f"crows_pairs[{axis}]": {
                "headline": [{**SCORE, "label": f"% stereotype preferred ({axis})"}],
                "metrics": {"metric_score": numbers[index]},
                "axis": axis,
                "intervals": {"metric_score": list(numbers[2 + index])},
                "interval": "Wilson score interval over pairs",
            }
            for axis, numbers in values.items()
        }
        benchmarks["becpro"] = {
            "headline": [{"key": "gap", "label": "gap", "unit": "nats", "better": "lower",
                          "ideal": 0.0}],
            "metrics": {"gap": 1.0 - 0.5 * index},
        }  # fmt: skip
        points.append(json.dumps({"step": step, "epoch": 0.0, "benchmarks": benchmarks,
                                  "heldout_loss": 2.0 + 0.1 * index}))  # fmt: skip
    (folder / "bias_metrics.jsonl").write_text("\n".join(points) + "\n")
    (folder / "recipe.yaml").write_text(
        yaml.safe_dump({"cds_mode": "cds", "cds_probability": 1.0, "bias_axis": bias_axis})
    )
    (folder / "run_info.json").write_text(json.dumps({"base_model": None}))
    return folder


def test_compare_prints_the_methods_by_axes_matrix(tmp_path):
    gender = _fake_run(tmp_path / "gender-cds", "gender", {
        "gender": (57.25, 51.00, (51.2, 63.1), (45.0, 57.0)),
        "religion": (62.86, 49.52, (53.31, 71.49), (40.15, 58.93)),
    })  # fmt: skip
    religion = _fake_run(tmp_path / "religion-cda", "religion", {
        "gender": (57.25, 58.00, (51.2, 63.1), (52.0, 63.8)),
        "religion": (62.86, 62.86, (53.31, 71.49), (53.31, 71.49)),
    })  # fmt: skip
    table = compare([gender, religion])
    assert "## Cross-axis matrix" in table
    header = next(line for line in table.splitlines() if line.startswith("| run | method | deb"))
    assert header == "| run | method | debiased for | gender | religion |"
    rows = {cells[0]: cells for cells in (line.strip("| ").split(" | ")
            for line in table.splitlines() if line.count("|") == 6 and " → " in line)}  # fmt: skip
    cells = rows["gender-cds"]
    assert cells[2] == "gender"
    assert cells[3] == "57.25 [51.2, 63.1] → 51.00 [45.0, 57.0]‡ (-6.25, better)"
    assert cells[4] == "62.86 [53.3, 71.5] → 49.52 [40.1, 58.9]‡ (-13.34, better)"
    cells = rows["religion-cda"]
    assert cells[2] == "religion"
    assert cells[3] == "57.25 [51.2, 63.1] → 58.00 [52.0, 63.8] (+0.75, worse)"
    assert cells[4].startswith("62.86 [53.3, 71.5] → 62.86 [53.3, 71.5] (+0.00, unchanged)")
    assert "crows_pairs: Wilson score interval over pairs" in table
    # An unscoped benchmark (no axis) stays out of the matrix.
    assert "### becpro" not in table


def test_compare_of_runs_without_axes_prints_no_matrix(tmp_path):
    from test_compare import HEADLINE, make_run

    before = {"gap": 2.0, "acc": 0.6, "ss": 60.0, "effect": -0.4, "zero": 0.0}
    run = make_run(tmp_path / "plain", {"bench_a": (HEADLINE, [before, before])})
    assert "Cross-axis" not in compare([run])


# ------------------------------------------------------------------ a tiny run on two axes
@pytest.fixture(scope="module")
def two_axis_run(tmp_path_factory, becpro, base) -> Path:
    from tests_helpers import fine_tune

    spec = axis_run_benchmarks(tmp_path_factory.mktemp("axis-data"), becpro)
    return fine_tune(tmp_path_factory.mktemp("axes") / "run", becpro, base,
                     "bias_eval_at_start=true", f"bias_benchmarks={spec}",
                     "bias_axes=[gender, religion]")  # fmt: skip


def test_each_axis_scoped_benchmark_is_scored_per_axis_at_every_point(two_axis_run):
    from cdsbias.runs.points import read_points

    points = read_points(two_axis_run)
    assert [p["step"] for p in points] == [0, 2]
    expected = {"becpro", "crows_pairs[gender]", "crows_pairs[religion]", "seat[gender]",
                "seat[religion]", "stereoset[gender]", "stereoset[religion]"}  # fmt: skip
    for point in points:
        assert set(point["benchmarks"]) == expected
        assert "axis" not in point["benchmarks"]["becpro"]  # a gender benchmark, as before
        for key in expected - {"becpro"}:
            entry = point["benchmarks"][key]
            axis = key[key.index("[") + 1 : -1]
            assert entry["axis"] == axis
            assert math.isfinite(entry["metrics"][entry["headline"][0]["key"]])
            folder = two_axis_run / "bias" / f"step-{point['step']}" / result_folder_name(key)
            assert (folder / "rows.tsv").is_file() and (folder / "summary.json").is_file()
        religion = point["benchmarks"]["crows_pairs[religion]"]
        assert religion["options"]["bias_type"] == "religion"
        low, high = religion["intervals"]["metric_score"]
        assert low <= religion["metrics"]["metric_score"] <= high
        seat = point["benchmarks"]["seat[religion]"]
        assert seat["options"]["tests"] == list(get_axis("religion").seat_tests)
    summary = json.loads((two_axis_run / "checkpoint-2" / "bias_summary.json").read_text())
    assert set(summary["benchmarks"]) == expected


def test_compare_and_card_of_the_two_axis_run(two_axis_run):
    from cdsbias.runs.card import model_card

    table = compare([two_axis_run])
    assert "## Cross-axis matrix" in table
    for benchmark in ("crows_pairs", "stereoset", "seat"):
        assert f"### {benchmark}:" in table
    assert "| run | method | debiased for | gender | religion |" in table
    card = str(model_card(two_axis_run, "org/two-axes"))
    assert "## Bias axes" in card and "Debiased for: **gender** (word lists: cdsbias)." in card
    assert "Measured before and after training: gender, religion." in card
    axes_table = card[card.index("## Bias axes") : card.index("## Bias before")]
    assert "| gender |" in axes_table and "| religion |" in axes_table
    assert "### crows_pairs[religion]" in card and "### seat[gender]" in card
    assert "religion bias" in card  # the hub results name the axis they measure


# ------------------------------------------------------------------ cdsbias evaluate --axis
def test_evaluate_axis_scores_the_axis_category(tiny_bert, tmp_path, capsys):
    data = axis_fixtures(tmp_path / "data")
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data",
                 str(data["crows_pairs"][0]), "--axis", "religion", "--out", str(out),
                 "--quiet"])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "crows_pairs@religion" / "summary.json").read_text())
    assert summary["bias_type_filter"] == "religion" and summary["n_pairs"] == 3
    code = main(["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data",
                 str(data["crows_pairs"][0]), "--axis", "religion", "--out", str(out / "sd"),
                 "--quiet", "--self-debias"])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "sd" / "crows_pairs@religion" / "summary.json").read_text())
    assert summary["self_debias"]["prefix"] == get_axis("religion").self_debias_prefix


def test_evaluate_axis_errors_are_one_line(tiny_bert, tmp_path, capsys):
    user = tmp_path / "colours.tsv"
    user.write_text("warm\tcold\nred\tblue\n")
    data = axis_fixtures(tmp_path / "data")
    base = ["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data",
            str(data["crows_pairs"][0]), "--out", str(tmp_path / "out")]  # fmt: skip
    code = main([*base, "--axis", str(user)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: bias axis 'colours'")
    assert "--option crows_pairs.bias_type=TYPE" in err[-1]
    code = main([*base, "--axis", str(user), "--option", "bias_type=gender", "--self-debias"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "has no Self-Debias prefix; give one: --self-debias" in err[-1]
    code = main([*base, "--axis", "relgion"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "religion" in err[-1] and err[-1].startswith("error:")
    assert not (tmp_path / "out").exists()


def test_evaluate_axis_warns_for_a_benchmark_that_measures_gender_only():
    from cdsbias.cli import build_parser
    from cdsbias.commands.evaluate import build_benchmarks

    args = build_parser().parse_args(["evaluate", "m", "-b", "becpro,crows_pairs", "--axis",
                                      "race"])  # fmt: skip
    with pytest.warns(UserWarning, match=r"becpro measures gender only: --axis race"):
        built = build_benchmarks(["becpro", "crows_pairs"], args)
    assert [b.key for b in built] == ["becpro", "crows_pairs[race]"]
    args = build_parser().parse_args(["evaluate", "m", "-b", "becpro", "--axis", "gender"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [b.key for b in build_benchmarks(["becpro"], args)] == ["becpro"]
