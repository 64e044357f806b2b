"""Published values beside measured ones: lookup, protocol differences, evaluate and report."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ASSETS

from cdsbias.axes.gender import SEAT_TESTS as GENDER_TESTS
from cdsbias.axes.race import SEAT_TESTS as RACE_TESTS
from cdsbias.axes.religion import SEAT_TESTS as RELIGION_TESTS
from cdsbias.benchmarks import REGISTRY, build_benchmark, load_all
from cdsbias.benchmarks.published import PublishedValue, published_notes
from cdsbias.cli import main

VALUE = PublishedValue(
    "bert-base-uncased", "score", 57.25, "Paper 2022, Table 9", "their protocol",
    scope={"subset": "gender"}, options={"scoring": "theirs"},
)  # fmt: skip


def test_lookup_prints_the_value_for_the_model_and_stays_silent_otherwise():
    options = {"subset": "gender", "scoring": "theirs"}
    line = "score: measured 56.1; published: 57.25 (Paper 2022, Table 9; their protocol)"
    assert published_notes((VALUE,), "bert-base-uncased", {"score": 56.1}, options) == [line]
    # The hub's organisation spelling is the same checkpoint.
    assert published_notes((VALUE,), "google-bert/bert-base-uncased", {"score": 56.1}, options)
    assert published_notes((VALUE,), "roberta-base", {"score": 56.1}, options) == []
    assert published_notes((VALUE,), None, {"score": 56.1}, options) == []
    assert published_notes((VALUE,), "bert-base-uncased", {"other": 1.0}, options) == []
    # Another scope (another subset) is another number: not mentioned.
    other = {**options, "subset": "race"}
    assert published_notes((VALUE,), "bert-base-uncased", {"score": 56.1}, other) == []


def test_a_different_protocol_is_named():
    options = {"subset": "gender", "scoring": "ours"}
    (line,) = published_notes((VALUE,), "bert-base-uncased", {"score": 56.1}, options,
                              own_data=True)  # fmt: skip
    assert line.endswith(
        "-- not like for like: scoring is 'ours' here, 'theirs' there; scored on your data "
        "file, not the benchmark's"
    )


CDA_RACE = PublishedValue(
    "bert-base-uncased", "score", 55.0, "Paper 2022, Table 4, BERT + CDA (race)",
    "their protocol", method="CDA", fitted_axis="race", word_lists="bias-bench",
)  # fmt: skip


def test_a_debiased_models_value_applies_only_to_that_method_and_axis():
    values, metrics = (VALUE, CDA_RACE), {"score": 56.1}
    options = {"subset": "gender", "scoring": "theirs"}
    # The model as released: only the undebiased value.
    (line,) = published_notes(values, "bert-base-uncased", metrics, options)
    assert "57.25" in line
    # CDA fitted on race with bias-bench's lists: only CDA's race value, like for like.
    (line,) = published_notes(values, "bert-base-uncased", metrics, options, method="CDA",
                              fitted_axis="race", word_lists="bias-bench")  # fmt: skip
    assert line == (
        "score: measured 56.1; published: 55.00 (Paper 2022, Table 4, BERT + CDA (race); "
        "their protocol)"
    )
    # Another axis or method: nothing; other word lists: named.
    for other in ({"method": "CDA", "fitted_axis": "gender"}, {"method": "Dropout",
                                                               "fitted_axis": "race"}):  # fmt: skip
        assert published_notes(values, "bert-base-uncased", metrics, options, **other) == []
    (line,) = published_notes(values, "bert-base-uncased", metrics, options, method="CDA",
                              fitted_axis="race", word_lists="cdsbias")  # fmt: skip
    assert line.endswith(
        "-- not like for like: fitted on cdsbias word lists here, bias-bench's there"
    )


def test_every_published_method_is_a_known_one():
    from cdsbias.benchmarks.published import METHODS

    load_all()
    for cls in REGISTRY.values():
        for value in cls.published:
            assert value.method in ("", *METHODS)
            assert bool(value.method) == bool(value.fitted_axis)


def test_every_published_value_names_a_headline_or_reported_metric():
    load_all()
    for name, cls in REGISTRY.items():
        for value in cls.published:
            assert value.source and value.protocol and value.model
            assert all(key in {f.name for f in cls.Options.__dataclass_fields__.values()}
                       for key in [*value.scope, *value.options]), name  # fmt: skip


def test_benchmarks_declare_the_values_of_meade_et_al():
    seat = build_benchmark("seat", {})
    (line,) = seat.published_notes("bert-base-uncased", {"avg_abs_effect_size": 0.6})
    assert "published: 0.620 (Meade et al. 2022" in line and "not like for like" not in line
    # The paper scored the StereoSet test set; the shipped data is the dev set.
    stereoset = build_benchmark("stereoset", {})
    notes = stereoset.published_notes("bert-base-uncased", {"ss_gender": 61.0})
    assert notes == [
        "ss_gender: measured 61; published: 60.28 (Meade et al. 2022 (ACL), BERT gender "
        "results; bias-bench leaderboard; bias-bench scoring, gender clusters) -- not like for "
        "like: the paper scored the StereoSet test set; the shipped data is the dev set"
    ]
    # All bias types: the leaderboard's overall columns, under the overall metric keys.
    overall = stereoset.published_notes("bert-base-uncased", {"lms": 84.0, "icat": 70.0})
    assert [line.split(" (")[0] for line in overall] == [
        "lms: measured 84; published: 84.36",
        "icat: measured 70; published: 71.15",
    ]
    assert all("bias-bench leaderboard (Meade et al. 2022), BERT, all bias types" in line
               for line in overall)  # fmt: skip
    (lms_gender,) = stereoset.published_notes("bert-base-uncased", {"lms_gender": 84.0})
    assert (
        "published: 84.17 (Meade et al. 2022 (ACL), BERT gender results; same in Li" in lms_gender
    )
    crows = build_benchmark("crows_pairs", {"scoring": "bias_bench", "bias_type": "gender"})
    # Nangia et al.'s value (nangia scoring) prints too, named not like for like.
    line, nangia = crows.published_notes("bert-base-uncased", {"metric_score": 57.0})
    assert "published: 57.25" in line and "not like for like" not in line
    assert "published: 58.0 (Nangia et al. 2020" in nangia and "not like for like" in nangia


def test_benchmarks_declare_meades_debiased_bert():
    def notes(name, options, metrics, **method):
        benchmark = build_benchmark(name, options)
        return published_notes(benchmark.published, "bert-base-uncased", metrics,
                               benchmark.option_values(), **method)  # fmt: skip

    race = {"method": "CDA", "fitted_axis": "race", "word_lists": "bias-bench"}
    crows = {"scoring": "bias_bench", "bias_type": "race-color"}
    (line,) = notes("crows_pairs", crows, {"metric_score": 57.0}, **race)
    assert "published: 56.70 (bias-bench leaderboard" in line and "BERT + CDA" in line
    (line,) = notes("stereoset", {"bias_type": "race"}, {"ss": 57.0}, **race)
    assert "published: 56.73" in line and "leaderboard prints 57.73" in line
    (line,) = notes("seat", {"tests": list(RACE_TESTS)}, {"avg_abs_effect_size": 0.5}, **race)
    assert "published: 0.569 (Meade et al. 2022, as reprinted" in line and "Table 8" in line
    # Fitted on gender, scored on race: the paper scored no such model.
    gender_fit = {**race, "fitted_axis": "gender"}
    assert notes("crows_pairs", crows, {"metric_score": 57.0}, **gender_fit) == []
    # Self-Debias has no SEAT value (it changes no representation); INLP's is the reprint's.
    tests = {"tests": list(GENDER_TESTS)}
    self_debias = {"method": "Self-Debias", "fitted_axis": "gender", "word_lists": "bias-bench"}
    assert notes("seat", tests, {"avg_abs_effect_size": 0.5}, **self_debias) == []
    inlp = {**self_debias, "method": "INLP"}
    (line,) = notes("seat", tests, {"avg_abs_effect_size": 0.5}, **inlp)
    assert "published: 0.204" in line
    # The undebiased race and religion SEAT averages sit beside the base model.
    (line,) = notes("seat", {"tests": list(RELIGION_TESTS)}, {"avg_abs_effect_size": 0.5})
    assert "published: 0.492" in line


@pytest.fixture
def hub_copy(real_vocab_bert, tmp_path):
    """A local folder saved from the hub model bert-base-uncased (its config says so)."""
    folder = tmp_path / "bert-copy"
    shutil.copytree(real_vocab_bert, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(
        json.dumps({**config, "_name_or_path": "bert-base-uncased"})
    )
    return folder


def test_evaluate_prints_published_values_for_a_hub_model_folder(hub_copy, tmp_path, capsys):
    argv = ["evaluate", str(hub_copy), "-b", "crows_pairs", "--out", str(tmp_path / "out"),
            "--data", str(ASSETS / "crows_pairs" / "crows_pairs_mini.csv"), "--quiet",
            "--option", "scoring=bias_bench"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "crows_pairs metric_score_gender: measured" in printed
    assert "published: 57.25 (Meade et al. 2022" in printed
    assert "not like for like: scored on your data file" in printed
    # A checkpoint trained here is not the model the paper scored, whatever its config says.
    (hub_copy / "trainer_state.json").write_text("{}")
    assert main([*argv, "--overwrite"]) == 0
    assert "published:" not in capsys.readouterr().out


def test_evaluate_is_silent_for_models_without_published_values(real_vocab_bert, tmp_path, capsys):
    argv = ["evaluate", str(real_vocab_bert), "-b", "crows_pairs", "--quiet",
            "--out", str(tmp_path / "out"), "--option", "scoring=bias_bench",
            "--data", str(ASSETS / "crows_pairs" / "crows_pairs_mini.csv")]  # fmt: skip
    assert main(argv) == 0
    assert "published:" not in capsys.readouterr().out


def test_report_shows_published_values_beside_step_zero(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run_info.json").write_text(json.dumps({"base_model": "bert-base-uncased"}))
    (run / "recipe.yaml").write_text("bias_benchmarks: [seat]\n")
    seat = build_benchmark("seat", {})
    entry = {
        "headline": [m.__dict__ for m in seat.headline_metrics()],
        "options": seat.option_values(),
    }
    points = [
        {"step": 0, "benchmarks": {"seat": {**entry, "metrics": {"avg_abs_effect_size": 0.61}}}},
        {"step": 9, "benchmarks": {"seat": {**entry, "metrics": {"avg_abs_effect_size": 0.3}}}},
    ]
    (run / "bias_metrics.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    assert main(["report", str(run)]) == 0
    printed = capsys.readouterr().out
    assert "step 0 (bert-base-uncased), seat avg_abs_effect_size: measured 0.61; published: " \
           "0.620 (Meade et al. 2022" in printed  # fmt: skip
    # A run from scratch (no base model) has nothing to compare.
    (run / "run_info.json").write_text(json.dumps({"base_model": None}))
    assert main(["report", str(run)]) == 0
    assert "published:" not in capsys.readouterr().out
