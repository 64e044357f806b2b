"""The batching bound the benchmark scripts print (scripts/_bound.py): its arithmetic and the
FLOPs it reads from the profiler, on hand numbers."""

from __future__ import annotations

import sys

import pytest
import torch
from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))

from _bound import BatchingBound, batching_bound


def test_bound_is_the_products_at_the_batched_rate_with_duplicates_once():
    # 2 s naive; 1 GFLOP of products at 1 GFLOP/s batched -> 1 s; 1.5 rows a sentence -> 3x.
    bound = BatchingBound(2.0, 1e9, 0.5e9, 1e9, 0.5, 1.5)
    assert bound.ratio == pytest.approx(3.0)
    assert bound.lines(3.5, 10)[1].startswith("target >= 10x: not reachable here: bound 3.0x")
    assert bound.lines(12.0, 10)[1] == "target >= 10x: met (12.0x)"
    assert bound.lines(1.0, 2)[1] == "target >= 2x: not met (1.0x; bound 3.0x)"


def test_flops_are_the_naive_loops_linear_layers():
    torch.manual_seed(0)
    layers = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    inputs = [torch.randn(rows, 8) for rows in (3, 5)]

    def naive() -> None:
        with torch.inference_mode():
            for x in inputs:
                layers(x)

    bound = batching_bound(naive, naive_seconds=1.0, duplicates=2.0)
    assert bound.flops == 2 * (3 + 5) * (8 * 16 + 16 * 4)
    assert 0 < bound.outside_share < 1 and bound.naive_rate > 0 and bound.batched_rate > 0
    assert bound.ratio == pytest.approx(2.0 * bound.batched_rate / bound.flops)
