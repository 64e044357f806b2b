"""The age axis: young and old people; the one new axis CDS/CDA applies to.

Word tuples: ``cdsbias/resources/axes/age.tsv`` (young/old, younger/older, youngest/oldest,
teenage/elderly, teenager/retiree, teenagers/retirees), written for cdsbias from
HolisticBias's age descriptors. Swapping them gives the same sentence about a person of the
other age group ("a young man forgot his keys" -> "an old man forgot his keys"), so CDS and
CDA apply. The adjectives also describe things ("an old house", "ten years old", "a young
company"), so CDS changes them only where they describe people, as race's colour words
(:attr:`~cdsbias.axes.BiasAxis.people_only`; docs/axes.md).

Self-Debias prefix: bias-bench's ``age`` prefix (Meade et al. 2022,
``bias_bench/benchmark/crows/crows.py`` ``DEBIASING_PREFIXES``). SEAT: ``sent-weat10``, May
et al. (2019)'s sentence version of Caliskan et al. (2017)'s WEAT 10 (young vs old people's
names, pleasant vs unpleasant). CrowS-Pairs ``age`` (87 pairs); StereoSet has no age domain.
HolisticBias axis ``age``: buckets child and young for the young group, old for the old
(middle_aged and adult name neither).
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = "The following text discriminates against people because of their age: "
SEAT_TESTS = ("sent-weat10",)
#: Adjectives that describe things as well as people: substituted before a person noun only.
PEOPLE_ONLY = frozenset(
    {"young", "old", "younger", "older", "youngest", "oldest", "teenage", "elderly"}
)
HOLISTIC_BIAS_AXIS = "age"
HOLISTIC_BIAS_BUCKETS = (("child", "young"), ("old",))


def build() -> BiasAxis:
    """The age axis."""
    return read_tsv_axis(
        resources.resource_path("axes", "age.tsv"),
        name="age",
        description="age: young and old people",
        self_debias_prefix=PREFIX,
        seat_tests=SEAT_TESTS,
        crows_pairs_category="age",
        languages=("en",),
        people_only=PEOPLE_ONLY,
        holistic_bias_axis=HOLISTIC_BIAS_AXIS,
        holistic_bias_buckets=HOLISTIC_BIAS_BUCKETS,
        citations=(
            "Smith et al. (2022), HolisticBias v1.1: age descriptors (CC BY-SA 4.0)",
            "Meade et al. (2022), bias-bench: Self-Debias prefix",
            "Caliskan et al. (2017), WEAT 10; May et al. (2019), SEAT sent-weat10",
            "Nangia et al. (2020), CrowS-Pairs: the age category",
        ),
    )
