"""A table cell's uncertainty over training seeds and test examples.

Each seed's run gives a value and, where its benchmark computed one, a 95% interval over
the test examples (a bootstrap over professions or clusters, a Wilson interval over pairs:
the benchmark's own). The study's interval is a **two-level (hierarchical) bootstrap**
(Davison & Hinkley 1997, sec. 3.8; Saravanan et al. 2020): each replicate draws the seeds
with replacement (level 1, nonparametric), then for each drawn seed a value from that
seed's test-example sampling distribution (level 2, parametric: normal with the standard
error ``(high - low) / (2 * 1.959964)`` read from the benchmark's 95% interval). The
replicates' mean over seeds gives the percentile interval. Where a value has no interval
(held-out loss, a benchmark that computes none) level 2 is absent for it, and the table
says so. With one seed, level 1 is degenerate and the interval is the test examples' alone.

The change against base is computed per seed as ``after - before`` (the run's own first
point, or the base model's score), each side with its own level-2 noise (before and after
drawn independently, which overstates the spread when both score the same examples:
the test is conservative). Its two-sided bootstrap p-value is ``2 min(P(d <= 0), P(d >= 0))``
over the replicates; a change whose 95% interval contains 0 cannot be told from base.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054
#: Replicates of every bootstrap: enough for a stable 2.5% percentile (Davison & Hinkley).
N_REPLICATES = 2000


def standard_error(interval: Sequence[float] | None) -> float:
    """The standard error a 95% interval implies, ``(high - low) / (2 * 1.959964)``; 0.0
    when there is no (finite) interval."""
    if interval is None or len(interval) != 2:
        return 0.0
    low, high = (float(v) if v is not None else math.nan for v in interval)
    if not (math.isfinite(low) and math.isfinite(high)):
        return 0.0
    return max(high - low, 0.0) / (2 * Z95)


@dataclass(frozen=True)
class SeedValues:
    """One table cell's per-seed values and their test-example standard errors."""

    values: tuple[float, ...]
    errors: tuple[float, ...]

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def sd(self) -> float | None:
        """The seed standard deviation (ddof 1); None with one seed; exactly 0 when every
        seed gave the same value (a seed-independent method: numpy's mean of equal floats
        can be an ulp off them, which would leave an SD of ~1e-16)."""
        if len(self.values) < 2:
            return None
        if len(set(self.values)) == 1:
            return 0.0
        return float(np.std(self.values, ddof=1))

    @property
    def has_examples(self) -> bool:
        """Whether the test-example level is part of the interval."""
        return any(e > 0 for e in self.errors)

    @property
    def has_spread(self) -> bool:
        """Whether the bootstrap can see any uncertainty: two seeds or more, or a
        test-example interval. One seed without one has none to resample: no interval and
        no test are given then (they would be a point and p = 0)."""
        return len(self.values) > 1 or self.has_examples

    def replicates(self, rng: np.random.Generator, n: int = N_REPLICATES) -> np.ndarray:
        """``n`` two-level bootstrap replicates of the mean over seeds."""
        values, errors = np.asarray(self.values), np.asarray(self.errors)
        k = len(values)
        chosen = rng.integers(0, k, size=(n, k))
        draws = values[chosen] + errors[chosen] * rng.standard_normal((n, k))
        return draws.mean(axis=1)


def interval(replicates: np.ndarray) -> tuple[float, float]:
    """The percentile 95% interval of bootstrap replicates."""
    low, high = np.percentile(replicates, [2.5, 97.5])
    return float(low), float(high)


def two_sided_p(replicates: np.ndarray) -> float:
    """Bootstrap p-value of "the change is 0": ``2 min(P(d <= 0), P(d >= 0))``, at most 1."""
    below = float(np.mean(replicates <= 0))
    above = float(np.mean(replicates >= 0))
    return min(1.0, 2 * min(below, above))


def rng_for(*names: str) -> np.random.Generator:
    """A generator seeded by the names of what it resamples, so a table is the same every
    time it is written, whatever order its cells are read in."""
    import hashlib

    digest = hashlib.sha256("\0".join(names).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))
