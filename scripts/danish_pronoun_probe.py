"""Which pronoun a Danish demo model gives each occupation, in sentences it can read.

DaWinoBias and ABC sentences are mostly words outside the Danish demo model's corpus
vocabulary (split into characters), so on that model they show no planted bias. This probe
asks the same question in the corpus's vocabulary but in templates that are not its frames:
``ln P(han) - ln P(hun)`` in ``"<occupation> kom hjem, og [MASK] var træt."`` and two more,
averaged per occupation, then per stereotype (docs/demo.md).

Usage: python scripts/danish_pronoun_probe.py MODEL_FOLDER [MODEL_FOLDER ...]
"""

from __future__ import annotations

import sys

import numpy as np

from cdsbias.data.occupations_da import load_danish_occupations
from cdsbias.scoring import MASK_PLACEHOLDER, MaskedLMScorer

TEMPLATES = (
    "{K} kom hjem, og {M} var træt.",
    "vi så {K} i byen, men {M} så ikke os.",
    "{K} ringede, fordi {M} var syg i går.",
)


def probe(folder: str) -> dict[str, float]:
    """Mean ln P(han) - ln P(hun) per stereotype, and their difference."""
    scorer = MaskedLMScorer.from_pretrained(folder, batch_size=256)
    occupations = load_danish_occupations()
    sentences, groups = [], []
    for _, definite, stereotype in occupations:
        for template in TEMPLATES:
            text = template.format(K=definite, M=MASK_PLACEHOLDER)
            sentences.append(text[0].upper() + text[1:])
            groups.append(stereotype)
    odds = scorer.target_log_probs(sentences, ["han"] * len(sentences)) - (
        scorer.target_log_probs(sentences, ["hun"] * len(sentences))
    )
    groups_arr = np.array(groups)
    male, female = odds[groups_arr == "male"].mean(), odds[groups_arr == "female"].mean()
    return {"male": float(male), "female": float(female), "difference": float(male - female)}


if __name__ == "__main__":
    for model in sys.argv[1:]:
        r = probe(model)
        print(
            f"{model}: ln P(han)/P(hun), male occupations {r['male']:+.3f}, female "
            f"{r['female']:+.3f}, difference {r['difference']:+.3f}"
        )
