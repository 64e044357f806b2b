"""The sexual-orientation axis: LGBTQ and straight people. Measured and debiased post hoc.

Word tuples: ``cdsbias/resources/axes/sexual_orientation.tsv`` (gay/straight,
lesbian/straight, homosexual/heterosexual, bisexual/heterosexual, queer/straight),
written for cdsbias from HolisticBias's ``sexual_orientation`` descriptors. **CDS/CDA does
not apply**: the everyday counterpart of *gay* is *straight*, which mostly means something
else ("go straight home", "straight hair", "three straight wins") and would be turned into
*gay* there; *heterosexual* is a clinical register that changes how the sentence reads; and
many sentences tie the orientation to a partner's gender ("Danny had to force his partner
James ..."), which a word swap does not change. The tuples still choose the post-hoc
methods' fit sentences.

Self-Debias prefix: bias-bench's ``sexual-orientation`` prefix, kept verbatim with its
misspelling "orientiation" (Meade et al. 2022; the prefix is text the model reads, so the
reference's spelling is what reproduces its numbers). CrowS-Pairs ``sexual-orientation``
(84 pairs); no StereoSet domain or SEAT test. HolisticBias axis ``sexual_orientation``:
every bucket but straight names the LGBTQ group; polyamorous (a relationship form, not an
orientation) is left out.
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = "The following text discriminates against people because of their sexual orientiation: "
CDS_REFUSED = (
    "the counterpart of 'gay' is 'straight', which mostly means something else ('go "
    "straight home', 'straight hair'), and many sentences tie the orientation to a "
    "partner's gender, which a word swap leaves unchanged"
)
HOLISTIC_BIAS_AXIS = "sexual_orientation"
HOLISTIC_BIAS_BUCKETS = (
    ("asexual_or_aromantic", "bi", "demisexual", "gay", "lesbian", "pansexual", "queer"),
    ("straight",),
)


def build() -> BiasAxis:
    """The sexual-orientation axis."""
    return read_tsv_axis(
        resources.resource_path("axes", "sexual_orientation.tsv"),
        name="sexual_orientation",
        description="sexual orientation: LGBTQ and straight people",
        self_debias_prefix=PREFIX,
        crows_pairs_category="sexual-orientation",
        languages=("en",),
        cds_refused=CDS_REFUSED,
        holistic_bias_axis=HOLISTIC_BIAS_AXIS,
        holistic_bias_buckets=HOLISTIC_BIAS_BUCKETS,
        citations=(
            "Smith et al. (2022), HolisticBias v1.1: sexual_orientation descriptors (CC BY-SA 4.0)",
            "Meade et al. (2022), bias-bench: Self-Debias prefix",
            "Nangia et al. (2020), CrowS-Pairs: the sexual-orientation category",
        ),
    )
