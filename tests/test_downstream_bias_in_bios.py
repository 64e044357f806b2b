"""Bias in Bios: which occupations the TPR gap covers (counted on test examples, whatever
the seeds) and what ``scrub: true`` deletes (issue 36)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import ASSETS, REPO

from cdsbias.downstream import get_task, load_all
from cdsbias.downstream.bias_in_bios import scrub
from cdsbias.downstream.metrics import occupations_with_both_genders, tpr_gaps

load_all()
DATA = ASSETS / "downstream" / "bias_in_bios"
HELD_OUT = ASSETS / "downstream" / "scrub_heldout.tsv"


# ------------------------------------------------------------------ occupations and seeds
def _rows(test: pd.DataFrame, seeds: tuple[int, ...]) -> pd.DataFrame:
    """Every seed predicts alike: all correct except the male nurses (occupation 0)."""
    wrong = (test["profession"] == 0) & (test["gender"] == 0)
    prediction = test["profession"].where(~wrong, 2)
    return pd.concat(
        [test.assign(example=range(len(test)), seed=s, prediction=prediction) for s in seeds],
        ignore_index=True,
    )


@pytest.mark.parametrize("seeds", [(0,), (0, 1), (0, 1, 2)])
def test_the_occupations_of_the_tpr_gap_do_not_depend_on_the_seeds(seeds):
    # Fixture test split: nurses (0) 2 men and 4 women, engineers (1) 4 men and 2 women,
    # teachers (2) 3 and 3. With min 3, only teachers count; two seeds' rows pooled used
    # to give the nurses 4 male rows and let their gap of 1.0 into the pooled RMS.
    task = get_task("bias_in_bios")({"min_group_examples": 3, "n_resamples": 20}, DATA)
    rows = _rows(task.load()["test"], seeds)
    with pytest.warns(UserWarning, match=r"2 occupation\(s\) left out .*0 \(2 male, 4 female\)"):
        summary = task.summarize(rows)
    assert summary["metrics"]["tpr_gap_rms"]["value"] == 0.0  # teachers only: no gap
    assert summary["metrics"]["tpr_gap_rms"]["ci_high"] == 0.0  # every resample likewise
    assert all(values["tpr_gap_rms"] == 0.0 for values in summary["per_seed"].values())
    assert task.per_group(rows) == {"2": {"tpr_gap": 0.0, "share_women": 0.5}}
    assert task.facts["tpr_gap_occupations"] == 1
    assert len(summary["notes"]) == 1


def test_a_kept_occupation_enters_pooled_and_per_seed_values_alike():
    task = get_task("bias_in_bios")({"min_group_examples": 2, "n_resamples": 0}, DATA)
    test = task.load()["test"]
    rows = _rows(test, (0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left out, nothing warned
        summary = task.summarize(rows)
    # Gaps: nurses 1 - 0 = +1.0, engineers 0, teachers 0 -> RMS sqrt(1/3).
    expected = np.sqrt(1 / 3)
    assert summary["metrics"]["tpr_gap_rms"]["value"] == pytest.approx(expected, rel=1e-12)
    assert [v["tpr_gap_rms"] for v in summary["per_seed"].values()] == pytest.approx(
        [expected, expected], rel=1e-12
    )
    assert sorted(task.per_group(rows)) == ["0", "1", "2"]


def test_occupations_with_both_genders_counts_examples():
    kept = occupations_with_both_genders([0, 0, 0, 1, 1, 1, 1], [0, 1, 1, 0, 0, 0, 1],
                                         min_examples=2)  # fmt: skip
    assert kept.kept == () and kept.left_out == {0: (1, 2), 1: (3, 1)}
    gaps = tpr_gaps([0, 0, 1, 1], [0, 1, 1, 1], [0, 1, 0, 1], occupations=[0])
    assert gaps.gaps == {0: -1.0} and gaps.left_out == {}


def test_scoring_rows_before_loading_is_refused():
    task = get_task("bias_in_bios")({}, DATA)
    with pytest.raises(RuntimeError, match="load"):
        task.statistics(pd.DataFrame({"profession": [0], "prediction": [0], "gender": [0]}))


def test_the_share_of_women_is_the_training_splits_and_the_reference_is_named():
    task = get_task("bias_in_bios")({"max_train_examples": 10, "n_resamples": 0}, DATA)
    train = task.load()["train"]
    assert len(train) == 10 and task.facts["share_women_from"] == "train split"
    assert task.share_women == train.groupby("profession")["gender"].mean().to_dict()
    # The INLP authors' notebooks (nullspace_projection, notebooks/biasbios_bert.ipynb)
    # count train + dev + test: every place that names the choice says so.
    from cdsbias.downstream import bias_in_bios, metrics

    docs = (REPO / "docs" / "downstream.md").read_text(encoding="utf-8")
    for text in (docs, bias_in_bios.__doc__, metrics.share_of_women.__doc__):
        assert "train + dev + test" in " ".join(text.split())


# --------------------------------------------------------------------------- scrubbing
#: Development rows: the five of issue 36, then rows written for the rules (not from any
#: public data set). The held-out rows are in tests/assets/downstream/scrub_heldout.tsv.
DEVELOPMENT = [
    ("She joined in May 2015.", "joined in May 2015."),
    ("the Dean of Medicine at the University of Virginia", None),
    ("He hosts a radio show.", "hosts a radio show."),
    ("She studied at Duke University.", "studied at Duke University."),
    ("He taught at King's College London.", "taught at King's College London."),
    ("Mary is a nurse and she loves her husband.", "is a nurse and loves ."),
    ("John Smith, an engineer; his wife", "Smith, an engineer;"),
    ("Ms. Chen and her husband own a bakery.", ". Chen and own a bakery."),
    ("He has an MS from MIT and counts birds.", "has an MS from MIT and counts birds."),
    ("She is a hostess and a countess.", "is a and a ."),
    ("He tutors students and is an heir.", "tutors students and is an heir."),
    ("She thanks God, not a god.", "thanks God, not a ."),
    ("He met the Duke of Edinburgh.", "met the of Edinburgh."),
    ("She coaches at the Boys & Girls Club.", "coaches at the Boys & Girls Club."),
    (
        "He lectures at Queen Mary University of London.",
        "lectures at Queen Mary University of London.",
    ),
    ("Her mentor was Miss Marple.", "mentor was Marple."),
    ("HE WON THE AWARD.", "WON THE AWARD."),
    ("His Harvard Law School classmates admired him.", "Harvard Law School classmates admired ."),
]


@pytest.mark.parametrize(("text", "expected"), DEVELOPMENT)
def test_scrub_deletes_gendered_words_and_names_only(text, expected):
    assert scrub(text) == (text if expected is None else expected)


def test_scrub_held_out_rows():
    """Written before the fix; the one miss is "Will" opening a sentence, which the name
    rules take for the verb (docs/downstream.md)."""
    rows = [
        line.split("\t")
        for line in HELD_OUT.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    misses = [(text, scrub(text), want) for text, want in rows if scrub(text) != want]
    assert len(rows) == 20
    assert [text for text, *_ in misses] == ["Will joined the team in March; will he stay?"]
