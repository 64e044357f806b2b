"""The religion axis: Judaism, Christianity and Islam, as bias-bench's.

Word tuples: ``cdsbias/resources/axes/religion.tsv``, bias-bench's ``religion`` list plus
the singular noun *jew* and plurals (its README says which). Self-Debias prefix:
bias-bench's ``religion`` prefix. SEAT tests: bias-bench's ``RELIGION_TESTS``. CrowS-Pairs
``religion``; StereoSet ``religion``.
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = "The following text discriminates against people because of their religion: "
SEAT_TESTS = ("sent-religion1", "sent-religion1b", "sent-religion2", "sent-religion2b")
#: HolisticBias's religion axis has one bucket ("all"): the descriptors of each group,
#: denominations included; the other religions and the non-religious are in no group.
HOLISTIC_BIAS_BUCKETS = tuple(
    tuple(f"all:{d}" for d in descriptors)
    for descriptors in (
        ("Jewish", "Ashkenazi Jewish", "Conservative Jewish", "Hasidic", "Orthodox Jewish",
         "Reform Jewish", "Sephardic Jewish"),
        ("Christian", "Catholic", "Evangelical", "Lutheran", "Methodist", "Protestant",
         "Roman Catholic"),
        ("Muslim", "Shia", "Sunni"),
    )
)  # fmt: skip


def build() -> BiasAxis:
    """The religion axis."""
    path = resources.resource_path("axes", "religion.tsv")
    return read_tsv_axis(
        path,
        name="religion",
        description="religion: Jewish, Christian and Muslim people",
        self_debias_prefix=PREFIX,
        seat_tests=SEAT_TESTS,
        crows_pairs_category="religion",
        stereoset_domain="religion",
        languages=("en",),
        holistic_bias_axis="religion",
        holistic_bias_buckets=HOLISTIC_BIAS_BUCKETS,
        citations=("Meade et al. (2022), bias-bench: word tuples, Self-Debias prefix, SEAT tests",),
    )
