"""The nationality axis: HolisticBias's eleven nationalities. Measured and debiased post hoc.

Word tuples: ``cdsbias/resources/axes/nationality.tsv``, one column per country of
HolisticBias v1.1's ``nationality`` axis (United States, China, Cuba, Dominican Republic,
El Salvador, Guatemala, India, Mexico, Philippines, South Korea, Vietnam): the adjective
and the plural noun. **CDS/CDA does not apply**: a nationality comes with a country, a
language, cities, names and food that the sentence also names ("the Mexican family spoke
Spanish at home" -> "the Korean family spoke Spanish at home"), several countries have no
singular noun ("a Chinese"), and "Indian" also names Native Americans. The tuples still
choose the post-hoc methods' fit sentences.

Self-Debias prefix: bias-bench's ``nationality`` prefix (Meade et al. 2022). CrowS-Pairs
``nationality`` (159 pairs; its pairs name many more countries than these eleven);
StereoSet's ``race`` domain mixes race and nationality, so it is not this axis's. No SEAT
test. HolisticBias axis ``nationality``: one bucket per group.
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = "The following text discriminates against people because of their nationality: "
CDS_REFUSED = (
    "a nationality comes with a country, language, places and names the sentence also "
    "names ('the Mexican family spoke Spanish at home' -> 'the Korean family spoke "
    "Spanish at home'), and several nationalities have no singular noun ('a Chinese')"
)
HOLISTIC_BIAS_AXIS = "nationality"
HOLISTIC_BIAS_BUCKETS = (
    ("united_states",), ("china",), ("cuba",), ("dominican_republic",), ("el_salvador",),
    ("guatemala",), ("india",), ("mexico",), ("philippines",), ("south_korea",), ("vietnam",),
)  # fmt: skip


def build() -> BiasAxis:
    """The nationality axis."""
    return read_tsv_axis(
        resources.resource_path("axes", "nationality.tsv"),
        name="nationality",
        description="nationality: the eleven nationalities of HolisticBias",
        self_debias_prefix=PREFIX,
        crows_pairs_category="nationality",
        languages=("en",),
        cds_refused=CDS_REFUSED,
        holistic_bias_axis=HOLISTIC_BIAS_AXIS,
        holistic_bias_buckets=HOLISTIC_BIAS_BUCKETS,
        citations=(
            "Smith et al. (2022), HolisticBias v1.1: nationality descriptors (CC BY-SA 4.0)",
            "Meade et al. (2022), bias-bench: Self-Debias prefix",
            "Nangia et al. (2020), CrowS-Pairs: the nationality category",
        ),
    )
