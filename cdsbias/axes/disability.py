"""The disability axis: disabled and nondisabled people. Measured and debiased post hoc.

Word tuples: ``cdsbias/resources/axes/disability.tsv`` (disabled/nondisabled,
handicapped/able-bodied, blind/sighted, autistic/neurotypical, ...), written for cdsbias
from HolisticBias's ``ability`` descriptors. **CDS/CDA does not apply**: a disability is
what a sentence is about, not a label on a person it could swap ("the blind man read the
sign in braille" -> "the sighted man read the sign in braille"; "she parked her
wheelchair" has no counterpart at all), and the nondisabled words are marked terms that
running text rarely uses, so a counterfactual reads as another text rather than the same
one about another group. The tuples still choose the post-hoc methods' fit sentences.

Self-Debias prefix: bias-bench's ``disability`` prefix (Meade et al. 2022). CrowS-Pairs
``disability`` (60 pairs); no StereoSet domain or SEAT test. HolisticBias axis ``ability``:
every bucket names the disabled group except its nondisabled words (able-bodied,
nondisabled, non-disabled, neurotypical); four-eyed, glasses-wearing and barren are left
out as no disability.
"""

from __future__ import annotations

from cdsbias import resources
from cdsbias.axes.base import BiasAxis
from cdsbias.axes.files import read_tsv_axis

PREFIX = "The following text discriminates against people because of their disability: "
CDS_REFUSED = (
    "a disability is what its sentences are about ('the blind man read the sign in braille' "
    "-> 'the sighted man read the sign in braille'), most disability words have no "
    "counterpart, and 'nondisabled' is a term running text rarely uses"
)
HOLISTIC_BIAS_AXIS = "ability"
HOLISTIC_BIAS_BUCKETS = (
    (
        "auditory", "intellectual_and_developmental", "mobility", "neurological:autistic",
        "neurological:dyslexic", "neurological:neuroatypical", "neurological:neurodivergent",
        "neurological:neurodiverse", "neurological:non-neurotypical", "speech", "visual:blind",
        "visual:low-vision", "visual:vision-impaired", "visual:visually impaired",
        "other_disabilities:diabetic", "other_disabilities:immunocompromised",
        "unspecific:differently abled", "unspecific:disabled", "unspecific:handicapped",
    ),
    (
        "unspecific:able-bodied", "unspecific:nondisabled", "unspecific:non-disabled",
        "neurological:neurotypical",
    ),
)  # fmt: skip


def build() -> BiasAxis:
    """The disability axis."""
    return read_tsv_axis(
        resources.resource_path("axes", "disability.tsv"),
        name="disability",
        description="disability: disabled and nondisabled people",
        self_debias_prefix=PREFIX,
        crows_pairs_category="disability",
        languages=("en",),
        cds_refused=CDS_REFUSED,
        holistic_bias_axis=HOLISTIC_BIAS_AXIS,
        holistic_bias_buckets=HOLISTIC_BIAS_BUCKETS,
        citations=(
            "Smith et al. (2022), HolisticBias v1.1: ability descriptors (CC BY-SA 4.0)",
            "Meade et al. (2022), bias-bench: Self-Debias prefix",
            "Nangia et al. (2020), CrowS-Pairs: the disability category",
        ),
    )
