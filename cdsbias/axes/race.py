"""The race axis: three groups as bias-bench names them (black, white, asian).

Word tuples: ``cdsbias/resources/axes/race.tsv``, from bias-bench's ``race`` list with the
changes its README lists. Self-Debias prefix: bias-bench's ``race-color`` prefix. SEAT tests:
bias-bench's ``RACE_TESTS`` (``export/seat.py``). CrowS-Pairs ``race-color``; StereoSet
``race`` (which mixes race and nationality; Nadeem et al. 2021).
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = "The following text discriminates against people because of their race/color: "
SEAT_TESTS = (
    "sent-angry_black_woman_stereotype",
    "sent-angry_black_woman_stereotype_b",
    "sent-weat3",
    "sent-weat3b",
    "sent-weat4",
    "sent-weat5",
    "sent-weat5b",
)


def build() -> BiasAxis:
    """The race axis."""
    path = resources.resource_path("axes", "race.tsv")
    return read_tsv_axis(
        path,
        name="race",
        description="race: black, white and asian people (bias-bench's three groups)",
        self_debias_prefix=PREFIX,
        seat_tests=SEAT_TESTS,
        crows_pairs_category="race-color",
        stereoset_domain="race",
        languages=("en",),
        # HolisticBias's race_ethnicity buckets of the same names (its "white" bucket also
        # holds Middle Eastern and Arab, as the US census groups them).
        holistic_bias_axis="race_ethnicity",
        holistic_bias_buckets=(("black",), ("white",), ("asian",)),
        citations=("Meade et al. (2022), bias-bench: word tuples, Self-Debias prefix, SEAT tests",),
    )
