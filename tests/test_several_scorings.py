"""``scoring: [..]``: every requested score from the passes they share, each equal to its own
run; and Self-Debias refused wherever a chosen scoring reads no masked position."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import ASSETS
from tests_helpers import SMOKE, overrides

from cdsbias.benchmarks import Snapshot, build_benchmark, write_result
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.language import LanguageMismatchWarning
from cdsbias.scoring.unmasked import unmasked_score_sets, unmasked_scores

CROWS = ASSETS / "crows_pairs" / "crows_pairs_mini.csv"
STEREOSET = ASSETS / "stereoset" / "stereoset_mini.jsonl"
#: benchmark -> (data file, other options, a list of every scoring it offers)
CASES = {
    "crows_pairs": (CROWS, {}, ["nangia", "bias_bench", "aul", "aula"]),
    "stereoset": (STEREOSET, {"n_resamples": 30}, ["bias_bench", "aul", "aula"]),
}
#: Columns each scoring adds to a row (the rest are the data's).
SCORE_COLUMNS = {
    "crows_pairs": ["sent_more_score", "sent_less_score", "stereotype_preferred", "neutral"],
    "stereoset": ["stereotype_score", "anti_stereotype_score", "unrelated_score"],
}


@pytest.fixture(scope="module")
def scorer(tiny_bert) -> MaskedLMScorer:
    return MaskedLMScorer.from_pretrained(str(tiny_bert), batch_size=8, progress=False)


def _evaluate(name, scorer, scoring):
    data_file, options, _ = CASES[name]
    bench = build_benchmark(name, {"data_file": data_file, "scoring": scoring, **options})
    before = scorer.sequences_run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LanguageMismatchWarning)  # the tiny vocabulary
        result = bench.evaluate(scorer)
    return bench, result, scorer.sequences_run - before


def test_one_unmasked_pass_gives_aul_and_aula(scorer):
    sentences = ["He is a nurse.", "She is a judge, he is not.", "He is a nurse.", "A b"]
    sequences = [scorer.encode(s) for s in sentences]
    before = scorer.sequences_run
    both = unmasked_score_sets(scorer, sequences, ["aul", "aula"])
    assert scorer.sequences_run - before == 3  # each distinct sentence once, for both scores
    aul = unmasked_scores(scorer, sequences, "aul")
    aula = unmasked_scores(scorer, sequences, "aula")
    np.testing.assert_array_equal(both["aula"], aula)  # the same eager pass, the same numbers
    # AUL alone runs the model's SDPA kernel, from the shared pass eager attention: the
    # two differ by float rounding only.
    np.testing.assert_allclose(both["aul"], aul, atol=1e-6, rtol=0)
    assert not np.allclose(both["aul"], both["aula"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_list_equals_the_separate_runs_in_fewer_passes(name, scorer, tmp_path):
    names = CASES[name][2]
    bench, together, passes = _evaluate(name, scorer, names)
    separate = {scoring: _evaluate(name, scorer, scoring) for scoring in names}
    # AUL and AULA share one pass; each masked scoring runs its own.
    assert passes == sum(runs for s, (_, _, runs) in separate.items() if s != "aul")
    assert together.summary["scoring"] == names
    for scoring, (_, alone, _) in separate.items():
        for column in SCORE_COLUMNS[name]:
            ours, theirs = together.rows[f"{scoring}/{column}"], alone.rows[column]
            if scoring == "aul":  # from the shared eager pass (see the test above)
                np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)
            else:
                np.testing.assert_array_equal(ours.to_numpy(), theirs.to_numpy())
        assert together.summary["by_scoring"][scoring] == alone.summary
        assert {k[len(scoring) + 1 :]: v for k, v in together.metrics.items()
                if k.startswith(f"{scoring}/")} == alone.metrics  # fmt: skip
        assert alone.report in together.report
    # The files hold each scoring's columns and summary under its name.
    folder = write_result(together, tmp_path)
    rows = pd.read_csv(folder / "rows.tsv", sep="\t")
    assert {f"{s}/{c}" for s in names for c in SCORE_COLUMNS[name]} <= set(rows.columns)
    assert "scoring" not in rows.columns
    assert set(json.loads((folder / "summary.json").read_text())["by_scoring"]) == set(names)
    # Headline metrics, curve, card and hub entries name each scoring.
    keys = [m.key for m in bench.headline_metrics()]
    assert {key.split("/")[0] for key in keys} == set(names) and set(keys) <= set(together.metrics)
    curve = bench.curve_points(together.summary, together.metrics)
    assert all(any(label.endswith(f"[{s}]") for label in curve) for s in names)
    card = bench.card_section(None, Snapshot(3, together.metrics, together.summary))
    assert all(f"[{s}]" in card for s in names)
    hub = bench.eval_results(Snapshot(3, together.metrics), when="after")
    assert {entry.metric_type.split("/")[0] for entry in hub} == set(names)


def test_a_list_from_the_command_line_and_one_name_in_a_list(tiny_bert, tmp_path):
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data", str(CROWS),
                 "--out", str(out), "--quiet",
                 "--option", "crows_pairs.scoring=[aul,aula]"])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "crows_pairs" / "summary.json").read_text())
    assert summary["scoring"] == ["aul", "aula"]
    assert build_benchmark("crows_pairs", {"scoring": ["aul"]}).options.scoring == "aul"
    assert build_benchmark("stereoset", {"scoring": "aul,aula"}).options.scoring == ["aul", "aula"]


def test_bad_lists_are_clear_errors():
    with pytest.raises(CdsbiasError, match="names aul more than once; give each scoring once"):
        build_benchmark("crows_pairs", {"scoring": ["aul", "aula", "aul"]})
    with pytest.raises(CdsbiasError, match=r"must be one of nangia, bias_bench, aul, aula, got "
                       r"'aulx'. Did you mean 'aul'\?"):  # fmt: skip
        build_benchmark("crows_pairs", {"scoring": ["nangia", "aulx"]})
    with pytest.raises(CdsbiasError, match="must be one of bias_bench, aul, aula, got 'nangia'"):
        build_benchmark("stereoset", {"scoring": "aul,nangia"})


def test_published_values_are_named_per_scoring():
    bench = build_benchmark("crows_pairs", {"scoring": ["bias_bench", "aul"]})
    notes = bench.published_notes(
        "bert-base-uncased",
        {"bias_bench/metric_score_gender": 58.0, "aul/metric_score_gender": 51.0},
    )
    # Nangia et al.'s value (nangia scoring) is named not like for like beside both.
    nangia = [note for note in notes if "Nangia et al. 2020" in note]
    assert len(nangia) == 2 and all("'nangia' there" in note for note in nangia)
    notes = [note for note in notes if note not in nangia]
    assert len(notes) == 2 and notes[0].startswith("bias_bench/metric_score_gender: measured 58;")
    assert "not like for like" not in notes[0]  # the paper's scoring
    assert notes[1].startswith("aul/metric_score_gender: measured 51;")
    assert "scoring is 'aul' here, 'bias_bench' there" in notes[1]


# ------------------------------------------------------------------------- Self-Debias
def test_self_debias_scores_a_list_of_masked_scorings_only():
    assert (
        build_benchmark("crows_pairs", {"scoring": ["nangia", "bias_bench"]}).self_debias_conflict()
        is None
    )
    conflict = build_benchmark(
        "crows_pairs", {"scoring": ["bias_bench", "aula"]}
    ).self_debias_conflict()
    assert conflict.endswith("use --option crows_pairs.scoring=bias_bench")


@pytest.mark.parametrize(
    ("name", "scoring", "fix"),
    [
        ("crows_pairs", "aul", "crows_pairs.scoring=nangia"),
        ("crows_pairs", "[nangia,aul,aula]", "crows_pairs.scoring=nangia"),
        ("stereoset", "aula", "stereoset.scoring=bias_bench"),
        ("stereoset", "[aul,aula]", "stereoset.scoring=bias_bench"),
    ],
)
def test_self_debias_refuses_a_scoring_without_masks(tiny_bert, tmp_path, capsys, name,
                                                     scoring, fix):  # fmt: skip
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", name, "--data", str(CASES[name][0]),
                 "--out", str(out), "--self-debias",
                 "--option", f"{name}.scoring={scoring}"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: --self-debias cannot score {name}: scoring={scoring}")
    assert "read" in err[0] and "unmasked" in err[0] and err[0].endswith(f"--option {fix}.")
    assert not out.exists()


def test_self_debias_recipe_refuses_aul(tmp_path, becpro):
    from cdsbias.train.config import load_recipe

    spec = f"bias_benchmarks={{crows_pairs: {{data_file: {CROWS}, scoring: [nangia, aula]}}}}"
    with pytest.raises(CdsbiasError, match=r"self_debias: true cannot score crows_pairs: "
                       r"scoring=\[nangia,aula\]: aula reads every token"):  # fmt: skip
        load_recipe(SMOKE, overrides(tmp_path / "x", becpro, "self_debias=true", spec))
    # Without Self-Debias the same list is a valid recipe.
    recipe = load_recipe(SMOKE, overrides(tmp_path / "y", becpro, spec))
    assert recipe is not None


# ------------------------------------------------------------------------ training run
@pytest.mark.filterwarnings("ignore::cdsbias.scoring.language.LanguageMismatchWarning")
def test_a_training_run_logs_and_plots_each_scoring(tmp_path, becpro, base):
    from tests_helpers import fine_tune

    from cdsbias.runs.points import read_points

    spec = f"{{crows_pairs: {{data_file: {CROWS}, scoring: [aul, aula]}}}}"
    out = fine_tune(tmp_path / "run", becpro, base, f"bias_benchmarks={spec}")
    point = read_points(out)[-1]["benchmarks"]["crows_pairs"]
    assert {"aul/metric_score", "aula/metric_score_gender"} <= set(point["metrics"])
    assert [h["key"] for h in point["headline"]] == [
        "aul/metric_score", "aul/metric_score_gender", "aula/metric_score",
        "aula/metric_score_gender",
    ]  # fmt: skip
    assert any(label.endswith("[aula]") for label in point["curve"])
    rows = pd.read_csv(out / "bias" / f"step-{read_points(out)[-1]['step']}" / "crows_pairs"
                       / "rows.tsv", sep="\t")  # fmt: skip
    assert {"aul/sent_more_score", "aula/sent_more_score"} <= set(rows.columns)
