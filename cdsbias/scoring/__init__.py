"""The masked-LM scorer shared by every benchmark."""

from cdsbias.scoring.encoding import (
    MASK_PLACEHOLDER,
    EncodedTarget,
    LowercaseSentenceStartWarning,
    input_limit,
)
from cdsbias.scoring.loading import load_masked_lm, resolve_device
from cdsbias.scoring.scorer import MaskedLMScorer

__all__ = [
    "MASK_PLACEHOLDER",
    "EncodedTarget",
    "LowercaseSentenceStartWarning",
    "MaskedLMScorer",
    "input_limit",
    "load_masked_lm",
    "resolve_device",
]
