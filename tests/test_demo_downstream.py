"""The data and known answers of `make demo-downstream` (scripts/demo_downstream.py), without
fine-tuning: which occupations, the gender shares of both splits, the shortcut's answer."""

from __future__ import annotations

import sys
from collections import Counter

import pandas as pd
import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))

from demo_downstream import biographies, pick_occupations, shortcut_predictions

from cdsbias.downstream.bias_in_bios import scrub
from cdsbias.downstream.metrics import gap_share_correlation, share_of_women, tpr_gaps


@pytest.fixture(scope="module")
def occupations():
    return pick_occupations(4)


def test_occupations_span_the_three_groups_one_of_each_per_cluster(occupations):
    assert [o.label for o in occupations] == list(range(12))
    assert Counter(o.group for o in occupations) == {"male": 4, "balanced": 4, "female": 4}
    for cluster in range(4):
        members = [o for o in occupations if o.cluster == cluster]
        assert sorted(o.group for o in members) == ["balanced", "female", "male"]
    shares = sorted(o.percent_female for o in occupations)
    assert shares[0] < 5 and 45 < shares[5] < 55 and shares[-1] > 95  # the whole range


def test_training_shares_follow_the_occupation_and_test_is_balanced(occupations):
    train = pd.DataFrame(biographies(occupations, 160, training=True, seed=0))
    test = pd.DataFrame(biographies(occupations, 100, training=False, seed=1))
    shares = share_of_women(train["profession"], train["gender"])
    for o in occupations:
        assert shares[o.label] == round(o.percent_female / 100 * 160) / 160
    cells = test.groupby(["profession", "gender", "named"]).size()
    assert set(cells) == {25} and len(cells) == 12 * 2 * 2
    # Every biography carries a name and a pronoun, and scrubbing removes both.
    text = train["hard_text"].iloc[0]
    assert text.split()[0][0].isupper() and scrub(text) != text
    assert not {"he", "she", "his", "her"} & set(scrub(text).lower().replace(".", "").split())


def test_the_shortcut_gives_the_known_gaps_and_scrubbing_removes_them(occupations):
    train = biographies(occupations, 160, training=True, seed=0)
    test = biographies(occupations, 100, training=False, seed=1)
    frame = pd.DataFrame(test)
    expected = {"female": 0.5, "balanced": 0.0, "male": -0.5}
    shares = share_of_women(pd.DataFrame(train)["profession"], pd.DataFrame(train)["gender"])

    frame["prediction"] = shortcut_predictions(occupations, train, test, scrubbed=False)
    gaps = tpr_gaps(frame["profession"], frame["prediction"], frame["gender"])
    assert gaps.gaps == {o.label: expected[o.group] for o in occupations}
    assert gaps.rms == pytest.approx((2 * 0.25 / 3) ** 0.5)
    assert gap_share_correlation(gaps.gaps, shares) > 0.99
    assert (frame["prediction"] == frame["profession"]).mean() == pytest.approx(2 / 3)

    frame["prediction"] = shortcut_predictions(occupations, train, test, scrubbed=True)
    gaps = tpr_gaps(frame["profession"], frame["prediction"], frame["gender"])
    assert set(gaps.gaps.values()) == {0.0}
