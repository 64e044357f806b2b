"""The socioeconomic axis: poor and rich people. Measured and debiased post hoc.

Word tuples: ``cdsbias/resources/axes/socioeconomic.tsv`` (poor/rich, poorer/richer,
low-income/high-income, working-class/upper-class, impoverished/affluent), written for
cdsbias from HolisticBias's ``socioeconomic_class`` descriptors. **CDS/CDA does not
apply**: being poor or rich is what the sentences say ("they could not afford the rent
because they were poor" -> "... because they were rich"), and "poor" mostly means bad
("a poor excuse", "poor results"), which a swap would turn into "rich". The tuples still
choose the post-hoc methods' fit sentences.

Self-Debias prefix: bias-bench's ``socioeconomic`` prefix, "socioeconomic
status/occupation" (Meade et al. 2022). CrowS-Pairs ``socioeconomic`` (172 pairs, which
also cover occupations); no StereoSet domain or SEAT test. HolisticBias axis
``socioeconomic_class``: below_poverty_line and working_class for the poor group,
upper_class for the rich (middle_class and educational_attainment name neither).
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = (
    "The following text discriminates against people because of their socioeconomic "
    "status/occupation: "
)
CDS_REFUSED = (
    "being poor or rich is what its sentences say ('could not afford the rent because "
    "they were poor' -> '... because they were rich'), and 'poor' mostly means bad ('a "
    "poor excuse')"
)
HOLISTIC_BIAS_AXIS = "socioeconomic_class"
HOLISTIC_BIAS_BUCKETS = (("below_poverty_line", "working_class"), ("upper_class",))


def build() -> BiasAxis:
    """The socioeconomic axis."""
    return read_tsv_axis(
        resources.resource_path("axes", "socioeconomic.tsv"),
        name="socioeconomic",
        description="socioeconomic status: poor and rich people",
        self_debias_prefix=PREFIX,
        crows_pairs_category="socioeconomic",
        languages=("en",),
        cds_refused=CDS_REFUSED,
        holistic_bias_axis=HOLISTIC_BIAS_AXIS,
        holistic_bias_buckets=HOLISTIC_BIAS_BUCKETS,
        citations=(
            "Smith et al. (2022), HolisticBias v1.1: socioeconomic_class descriptors "
            "(CC BY-SA 4.0)",
            "Meade et al. (2022), bias-bench: Self-Debias prefix",
            "Nangia et al. (2020), CrowS-Pairs: the socioeconomic category",
        ),
    )
