"""A template probe of a planted group ↔ attribute association in a masked LM.

For every group ``g`` and attribute ``a``, the probe fills templates with the group's words
(:data:`cdsbias.demo.religion.PROBE_TEMPLATES`, each with every person noun; the age demo
uses the same templates with age words, :mod:`cdsbias.demo.age`) and reads
``ln P(a | sentence)`` at the mask; ``scores[g][a]`` is the mean over those sentences. The
association gap is the mean over groups of ``scores[g][a_g] − mean_{h≠g} scores[h][a_g]``:
how much more likely a group's own attribute is after that group than after the others.
It is the log-ratio form of the BEC-Pro association (Bartl et al. 2020, ln of the target's
probability in context over its prior) with the prior cancelled by comparing groups: the
same attribute's prior appears in both terms. For a model that reproduces its corpus it
equals :func:`cdsbias.demo.religion.expected_gap`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

#: The axes with a planted association, and the module that plants it (each has
#: ``ATTRIBUTES``, ``PERSONS``, ``PROBE_TEMPLATES``, ``forms()`` and ``render()``).
PLANTED = {"religion": "cdsbias.demo.religion", "age": "cdsbias.demo.age"}


def planted(axis: str) -> ModuleType:
    """The module that plants ``axis``'s association (:data:`PLANTED`)."""
    return importlib.import_module(PLANTED[axis])


@dataclass
class ProbeResult:
    """What the probe read.

    Attributes:
        groups: Group names, in axis order.
        attributes: Attribute words; ``attributes[g]`` is group ``g``'s own.
        scores: ``scores[g][a]``: mean ``ln P(attributes[a])`` at the mask after group ``g``.
        gap: The association gap in nats (:func:`association_gap`).
        per_group: Each group's own-attribute gap.
    """

    groups: tuple[str, ...]
    attributes: tuple[str, ...]
    scores: list[list[float]]
    gap: float
    per_group: list[float]

    def as_dict(self) -> dict[str, Any]:
        return {
            "groups": list(self.groups),
            "attributes": list(self.attributes),
            "scores": self.scores,
            "gap": self.gap,
            "per_group_gap": dict(zip(self.groups, self.per_group)),
        }


def association_gap(scores: list[list[float]]) -> tuple[float, list[float]]:
    """(mean gap, per-group gaps) of a groups × attributes score matrix (module docstring)."""
    k = len(scores)
    per_group = []
    for g in range(k):
        others = [scores[h][g] for h in range(k) if h != g]
        per_group.append(scores[g][g] - sum(others) / len(others))
    return sum(per_group) / k, per_group


def probe_sentences(group: int, axis: str = "religion") -> list[str]:
    """Every probe sentence of ``group`` (templates × person nouns), mask written ``[MASK]``."""
    module = planted(axis)
    forms = module.forms()
    return [
        module.render(template, group, None, person, forms)
        for template in module.PROBE_TEMPLATES
        # A template without a person noun is one sentence, not one per noun.
        for person in (module.PERSONS if "{A}" in template else module.PERSONS[:1])
    ]


def probe(scorer: Any, axis: str = "religion") -> ProbeResult:
    """Runs the probe of ``axis``'s planted association on a
    :class:`cdsbias.scoring.MaskedLMScorer`."""
    module = planted(axis)
    forms = module.forms()
    attributes = module.ATTRIBUTES
    k = len(forms.groups)
    rows: list[tuple[int, int]] = []
    sentences: list[str] = []
    targets: list[str] = []
    for g in range(k):
        for sentence in probe_sentences(g, axis):
            for a in range(k):
                rows.append((g, a))
                sentences.append(sentence)
                targets.append(attributes[a])
    values = scorer.target_log_probs(sentences, targets)
    sums = [[0.0] * k for _ in range(k)]
    counts = [[0] * k for _ in range(k)]
    for (g, a), value in zip(rows, values):
        sums[g][a] += float(value)
        counts[g][a] += 1
    scores = [[sums[g][a] / counts[g][a] for a in range(k)] for g in range(k)]
    gap, per_group = association_gap(scores)
    return ProbeResult(forms.groups, attributes[:k], scores, gap, per_group)
