"""The masked-LM scorer shared by every benchmark."""

from cdsbias.scoring.loading import load_masked_lm, resolve_device
from cdsbias.scoring.scorer import MASK_PLACEHOLDER, EncodedTarget, MaskedLMScorer

__all__ = [
    "MASK_PLACEHOLDER",
    "EncodedTarget",
    "MaskedLMScorer",
    "load_masked_lm",
    "resolve_device",
]
