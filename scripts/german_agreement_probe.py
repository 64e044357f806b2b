"""How grammatical a German demo model's agreement is: the determiner before a person noun.

For each (male, female) person noun of the German demo corpus and each profession, the model
fills ``[MASK] Schwester ist Elektrikerin.`` and ``[MASK] Bruder ist Elektriker.``; the
probe reports the share of sentences where the agreeing determiner (*meine* before a
feminine noun, *mein* before a masculine one) beats the other, and the mean log-odds. Naive
CDS (``cds_agreement: false``) writes *Mein Schwester ... Elektrikerin*, so a model
fine-tuned on it should lose some of this; CDS with agreement should not (docs/demo.md).

Usage: python scripts/german_agreement_probe.py MODEL_FOLDER [MODEL_FOLDER ...]
"""

from __future__ import annotations

import sys

import numpy as np

from cdsbias.data.occupations_de import PERSONS
from cdsbias.resources import load_professions
from cdsbias.scoring import MASK_PLACEHOLDER, MaskedLMScorer


def probe(folder: str) -> tuple[float, float]:
    """(share of sentences where the agreeing determiner wins, mean log-odds)."""
    scorer = MaskedLMScorer.from_pretrained(folder, batch_size=256)
    nouns = [(m.split()[1], f.split()[1]) for m, f in PERSONS if m.startswith("mein ")]
    forms = load_professions()[["profession_de_male", "profession_de_female"]].values
    sentences, right, wrong = [], [], []
    for male_noun, female_noun in nouns:
        for male_form, female_form in forms:
            for noun, form, det, other in (
                (male_noun, male_form, "Mein", "Meine"),
                (female_noun, female_form, "Meine", "Mein"),
            ):
                sentences.append(f"{MASK_PLACEHOLDER} {noun} ist {form}.")
                right.append(det)
                wrong.append(other)
    odds = scorer.target_log_probs(sentences, right) - scorer.target_log_probs(sentences, wrong)
    return float(np.mean(odds > 0)), float(np.mean(odds))


if __name__ == "__main__":
    for model in sys.argv[1:]:
        share, log_odds = probe(model)
        print(f"{model}: agreeing determiner wins {share:.1%}, mean log-odds {log_odds:+.3f}")
