"""Which pronoun a Danish demo model gives each occupation, in sentences it can read.

DaWinoBias and ABC sentences are mostly words outside the Danish demo model's corpus
vocabulary (split into characters), so on that model they show little of the planted bias.
This probe asks the same question in the corpus's vocabulary but in templates that are not
its frames: ``ln P(han) - ln P(hun)`` at the masked pronoun, averaged over the templates
per occupation, then per stereotype, in two kinds of template (docs/demo.md):

* ``coreference``: the definite occupation is the antecedent of a later pronoun
  (*Kokken kom hjem, og [MASK] var træt.*), the construction of DaWinoBias and ABC;
* ``person``: the pronoun is the person working as the occupation (*[MASK] arbejder som
  kok.*), the construction BEC-Pro reads in English.

An occupation has the right sign when its log-odds minus the mean over all 68 occupations
(the templates' own han/hun prior) is positive for a male-stereotyped occupation and
negative for a female-stereotyped one.

Usage: python scripts/danish_pronoun_probe.py MODEL_FOLDER [MODEL_FOLDER ...]
"""

from __future__ import annotations

import sys

import numpy as np

from cdsbias.data.occupations_da import load_danish_occupations
from cdsbias.scoring import MASK_PLACEHOLDER, MaskedLMScorer

#: {K} the definite occupation, {J} the indefinite one, {M} the masked pronoun.
TEMPLATES = {
    "coreference": (
        "{K} kom hjem, og {M} var træt.",
        "vi så {K} i byen, men {M} så ikke os.",
        "{K} ringede, fordi {M} var syg i går.",
    ),
    "person": (
        "{M} arbejder som {J}.",
        "{M} er {J} på fuld tid.",
    ),
}


def probe(scorer: MaskedLMScorer, kind: str) -> dict[str, float]:
    """Mean ln P(han) - ln P(hun) per stereotype, their difference and the right signs."""
    occupations = load_danish_occupations()
    templates = TEMPLATES[kind]
    sentences = []
    for occupation, definite, _ in occupations:
        for template in templates:
            text = template.format(K=definite, J=occupation, M=MASK_PLACEHOLDER)
            sentences.append(text[0].upper() + text[1:])
    odds = scorer.target_log_probs(sentences, ["han"] * len(sentences)) - (
        scorer.target_log_probs(sentences, ["hun"] * len(sentences))
    )
    per_occupation = odds.reshape(len(occupations), len(templates)).mean(axis=1)
    male = np.array([stereotype == "male" for *_, stereotype in occupations])
    centred = per_occupation - per_occupation.mean()
    return {
        "male": float(per_occupation[male].mean()),
        "female": float(per_occupation[~male].mean()),
        "difference": float(per_occupation[male].mean() - per_occupation[~male].mean()),
        "right_sign": int((centred[male] > 0).sum() + (centred[~male] < 0).sum()),
        "occupations": len(occupations),
    }


if __name__ == "__main__":
    for model in sys.argv[1:]:
        scorer = MaskedLMScorer.from_pretrained(model, batch_size=256)
        for kind in TEMPLATES:
            r = probe(scorer, kind)
            print(
                f"{model} [{kind}]: ln P(han)/P(hun), male occupations {r['male']:+.3f}, "
                f"female {r['female']:+.3f}, difference {r['difference']:+.3f}, right sign "
                f"{r['right_sign']}/{r['occupations']}"
            )
