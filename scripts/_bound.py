"""The largest speed-up batching can reach on this machine, measured in the benchmark's process.

A naive loop (one sentence per forward pass) spends its time in the matrix products of the
model's linear layers and in everything else (per-call overhead, element-wise kernels, small
attention products). Batching can at best (a) run the same matrix products at the rate this
machine reaches for a batched shape, (b) remove everything else, and (c) skip duplicate
sentences. So no batched implementation can beat::

    bound = naive seconds / (naive matrix-product FLOPs / batched GEMM rate) * (rows / distinct)

:func:`batching_bound` profiles one run of the naive loop (``torch.profiler``, FLOPs of
``aten::addmm``/``aten::mm`` by weight shape) and times ``linear`` at each weight shape with
many rows, so every number in the bound comes from this process on this machine. It is an
upper bound: element-wise work that batching cannot remove counts as removable. A method that
does fewer products than the loop (AUL projects 2 positions fewer per sentence to the
vocabulary) can exceed it by that share.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

#: Row counts at which a weight shape's batched GEMM rate is measured (the best is kept).
BATCHED_ROWS = (256, 1024)

#: The ops that carry the linear layers' matrix products on CPU.
MATRIX_OPS = ("aten::addmm", "aten::mm")


@dataclass(frozen=True)
class BatchingBound:
    """What :func:`batching_bound` measured.

    Attributes:
        naive_seconds: The naive loop's (unprofiled) time.
        flops: FLOPs of its linear layers' matrix products.
        naive_rate: Their rate in the naive loop, FLOP/s (profiled self time).
        batched_rate: The rate of the same products at batched shapes, FLOP/s.
        outside_share: Share of the naive loop's profiled time outside those products.
        duplicates: Rows per distinct sentence (what deduplication saves).
    """

    naive_seconds: float
    flops: float
    naive_rate: float
    batched_rate: float
    outside_share: float
    duplicates: float

    @property
    def ratio(self) -> float:
        """The largest speed-up any batching reaches: the products at the batched rate,
        nothing else, each distinct sentence once."""
        return self.naive_seconds / (self.flops / self.batched_rate) * self.duplicates

    def lines(self, ratio: float, target: float) -> list[str]:
        """Two lines to print: the measurements, and the verdict on ``ratio`` vs ``target``."""
        first = (
            f"bound: the naive loop runs its matrix products at {self.naive_rate / 1e9:.0f} "
            f"GFLOP/s and spends {self.outside_share:.0%} of its time outside them; batched, "
            f"the same products run at {self.batched_rate / 1e9:.0f} GFLOP/s here; with "
            f"{self.duplicates:.2f} rows per distinct sentence, no batching beats "
            f"{self.ratio:.1f}x"
        )
        if ratio >= target:
            verdict = f"target >= {target:g}x: met ({ratio:.1f}x)"
        elif self.ratio < target:
            verdict = (
                f"target >= {target:g}x: not reachable here: bound {self.ratio:.1f}x (the loop "
                f"is {1 - self.outside_share:.0%} matrix products, which batching speeds up "
                f"{self.batched_rate / self.naive_rate:.1f}x on this machine); "
                f"reached {ratio:.1f}x = {ratio / self.ratio:.0%} of the bound"
            )
        else:
            verdict = f"target >= {target:g}x: not met ({ratio:.1f}x; bound {self.ratio:.1f}x)"
        return [first, verdict]


def batching_bound(
    naive: Callable[[], object], naive_seconds: float, duplicates: float = 1.0
) -> BatchingBound:
    """Profiles one run of ``naive`` and measures the batched GEMM rate of its weight shapes.

    Args:
        naive: The naive loop (run once more, under the profiler).
        naive_seconds: Its best unprofiled time on the same work.
        duplicates: Rows per distinct row of the batched run's full input (>= 1).
    """
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
        naive()
    events = prof.key_averages(group_by_input_shape=True)
    total_us = sum(e.self_cpu_time_total for e in events)
    by_weight: dict[tuple[int, int], list[float]] = {}  # (in, out) -> [flops, self us]
    for event in events:
        if event.key not in MATRIX_OPS or not event.flops:
            continue
        shapes = [s for s in event.input_shapes if s]
        inner, outer = shapes[-1]  # addmm: bias, x, w; mm: x, w
        entry = by_weight.setdefault((inner, outer), [0.0, 0.0])
        entry[0] += event.flops
        entry[1] += event.self_cpu_time_total
    flops = sum(f for f, _ in by_weight.values())
    matrix_us = sum(t for _, t in by_weight.values())
    ideal_seconds = sum(f / best_gemm_rate(*shape) for shape, (f, _) in by_weight.items())
    return BatchingBound(
        naive_seconds=naive_seconds,
        flops=flops,
        naive_rate=flops / (matrix_us / 1e6),
        batched_rate=flops / ideal_seconds,
        outside_share=1 - matrix_us / total_us,
        duplicates=duplicates,
    )


def best_gemm_rate(inner: int, outer: int) -> float:
    """FLOP/s of ``linear`` with an ``outer x inner`` weight, best over :data:`BATCHED_ROWS`
    input rows (best of 3 runs each)."""
    import torch

    with torch.inference_mode():
        weight, bias = torch.randn(outer, inner), torch.randn(outer)
        best = 0.0
        for rows in BATCHED_ROWS:
            run = partial(torch.nn.functional.linear, torch.randn(rows, inner), weight, bias)
            run()  # warm-up
            seconds = min(_timed(run) for _ in range(3))
            best = max(best, 2 * rows * inner * outer / seconds)
    return best


def _timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start
