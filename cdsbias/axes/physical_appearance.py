"""The physical-appearance axis: disfavoured and favoured body types. Measured and debiased
post hoc.

Word tuples: ``cdsbias/resources/axes/physical_appearance.tsv`` (fat/thin,
overweight/slim, obese/slender, chubby/skinny, ugly/beautiful, unattractive/attractive),
written for cdsbias from HolisticBias's ``body_type`` descriptors; the groups follow
CrowS-Pairs, whose pairs contrast a disfavoured appearance with a favoured one. **CDS/CDA
does not apply**: the appearance is the content of the sentence, so the swap changes what
it says rather than whom it is about ("he was too fat to fit through the gap" -> "he was
too thin to fit through the gap"). Height words (short/tall) are left out of the tuples:
"short" mostly means something else ("a short time"), which would fill the post-hoc fit
sentences with sentences about no one. The tuples choose the post-hoc methods' fit
sentences.

Self-Debias prefix: bias-bench's ``physical-appearance`` prefix (Meade et al. 2022).
CrowS-Pairs ``physical-appearance`` (63 pairs); no StereoSet domain or SEAT test.
HolisticBias axis ``body_type``: overweight and unattractive for the disfavoured group,
thin, fit and attractive for the favoured one (stature, hair, eye and skin colour name
neither).
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = "The following text discriminates against people because of their physical appearance: "
CDS_REFUSED = (
    "the appearance is what its sentences say, so a swap changes the claim rather than the "
    "group ('too fat to fit through the gap' -> 'too thin to fit through the gap')"
)
HOLISTIC_BIAS_AXIS = "body_type"
HOLISTIC_BIAS_BUCKETS = (("overweight", "unattractive"), ("thin", "fit", "attractive"))


def build() -> BiasAxis:
    """The physical-appearance axis."""
    return read_tsv_axis(
        resources.resource_path("axes", "physical_appearance.tsv"),
        name="physical_appearance",
        description="physical appearance: disfavoured and favoured body types",
        self_debias_prefix=PREFIX,
        crows_pairs_category="physical-appearance",
        languages=("en",),
        cds_refused=CDS_REFUSED,
        holistic_bias_axis=HOLISTIC_BIAS_AXIS,
        holistic_bias_buckets=HOLISTIC_BIAS_BUCKETS,
        citations=(
            "Smith et al. (2022), HolisticBias v1.1: body_type descriptors (CC BY-SA 4.0)",
            "Meade et al. (2022), bias-bench: Self-Debias prefix",
            "Nangia et al. (2020), CrowS-Pairs: the physical-appearance category",
        ),
    )
