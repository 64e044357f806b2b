"""Bias benchmarks, one module each, registered by name.

Every module in this package (except ``base``) is imported by :func:`load_all`, so a
new benchmark only needs a file with a ``@register``-ed :class:`Benchmark` subclass.
"""

from __future__ import annotations

import importlib
import pkgutil

from cdsbias.benchmarks.base import (
    REGISTRY,
    Benchmark,
    BenchmarkResult,
    get_benchmark,
    list_benchmarks,
    register,
    to_json,
    write_result,
)

_NOT_BENCHMARKS = {"base"}


def load_all() -> None:
    """Imports every benchmark module so that it registers itself."""
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _NOT_BENCHMARKS and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


__all__ = [
    "REGISTRY",
    "Benchmark",
    "BenchmarkResult",
    "get_benchmark",
    "list_benchmarks",
    "load_all",
    "register",
    "to_json",
    "write_result",
]
