"""Bias benchmarks, one module each, registered by name.

Every module in this package is imported by :func:`load_all` except the shared ones
(``base``, ``results``, ``long_rows``, ``masked_pronoun``, ``published``) and the ``*_data``
modules that read a benchmark's files, so a new benchmark only needs a file with a
``@register``-ed :class:`Benchmark` subclass (see docs/adding_a_benchmark.md).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any

from cdsbias.benchmarks.axis_scope import result_folder, result_folder_name, result_key, split_key
from cdsbias.benchmarks.base import (
    COMMON_KEYS,
    REGISTRY,
    Benchmark,
    check_scorer_options,
    get_benchmark,
    list_benchmarks,
    register,
)
from cdsbias.benchmarks.results import (
    BenchmarkResult,
    Metric,
    Snapshot,
    UndefinedStatisticWarning,
    format_value,
    to_json,
    write_result,
)
from cdsbias.errors import CdsbiasError

_NOT_BENCHMARKS = {
    "base", "results", "long_rows", "masked_pronoun", "becpro_bartl2020", "becpro_report",
    "published", "kurita_probe", "scorings", "axis_scope",
    "stereoset_scores",
}  # fmt: skip

#: What is scored when nothing is named (the CLI's and the recipes' default).
DEFAULT_BENCHMARKS = ("becpro",)

#: Command-line flags of ``cdsbias evaluate`` that are shorthand for one benchmark option
#: (``--compat X`` is ``--option becpro.compat=X``): ``{"--flag": (benchmark, option,
#: choices)}``. Declared here rather than on the benchmark class so that building the CLI
#: parser imports no benchmark module.
OPTION_SHORTHAND_FLAGS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "--compat": ("becpro", "compat", ("bartl2020",)),
    "--mask-per": ("becpro", "mask_per", ("word", "piece")),
}


def load_all() -> None:
    """Imports every benchmark module so that it registers itself."""
    for info in pkgutil.iter_modules(__path__):
        name = info.name
        if name not in _NOT_BENCHMARKS and not name.startswith("_") and not name.endswith("_data"):
            importlib.import_module(f"{__name__}.{name}")


def normalize_specs(value: Any) -> dict[str, dict[str, Any]]:
    """``[a, b]``, ``"a,b"`` or ``{a: {opt: v}, b: {}}`` -> ``{name: {option: value}}``.

    Raises:
        CdsbiasError: Neither a list of names nor a mapping of names to option mappings.
    """
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        if not all(isinstance(v, str) for v in value):
            raise CdsbiasError(f"bias_benchmarks: expected benchmark names, got {value!r}.")
        return {name: {} for name in value}
    if isinstance(value, Mapping):
        specs = {}
        for name, options in value.items():
            if options is None:
                options = {}
            if not isinstance(options, Mapping):
                raise CdsbiasError(
                    f"bias_benchmarks: the options of '{name}' must be a mapping "
                    f"(e.g. {{{name}: {{n_resamples: 2000}}}}), got {options!r}."
                )
            specs[str(name)] = dict(options)
        return specs
    raise CdsbiasError(
        "bias_benchmarks must be a list of names or a mapping {name: {option: value}}, "
        f"got {value!r}."
    )


def build_benchmark(
    name: str, spec: Mapping[str, Any] | None = None, *, axis: Any = None, **defaults: Any
) -> Benchmark:
    """Instantiates benchmark ``name`` from a recipe-style mapping.

    Args:
        name: Registry name, or a result key ``name[axis]`` (:attr:`Benchmark.key`).
        spec: ``language``, ``data_file``, ``data_dir`` and the benchmark's options.
        axis: The bias axis (name, file or :class:`~cdsbias.axes.BiasAxis`) to scope the
            benchmark to where it has a notion of axis and ``spec`` leaves the scope open
            (default: the key's, else none).
        **defaults: Values used where ``spec`` is silent: ``language``/``data_dir``/
            ``data_file`` for every benchmark, and options applied only to benchmarks
            that declare them (e.g. ``n_resamples``). ``None`` values are ignored.

    Raises:
        CdsbiasError: Unknown name (with "Did you mean"), unknown option, bad value, or a
            language the benchmark does not support.
    """
    name, key_axis = split_key(name)
    axis = axis if axis is not None else key_axis
    cls = get_benchmark(name)
    spec = dict(spec or {})
    fields = {f.name for f in dataclasses.fields(cls.Options)}
    for key, value in defaults.items():
        if value is None or key in spec:
            continue
        if key in COMMON_KEYS or key in fields:
            spec[key] = value
    common = {key: spec.pop(key) for key in COMMON_KEYS if key in spec}
    return cls(**common, axis=axis, **spec)


def build_axis_benchmarks(
    name: str, spec: Mapping[str, Any] | None, axes: list[Any] | None, **defaults: Any
) -> list[Benchmark]:
    """Benchmark ``name`` once per bias axis it can score (``bias_axes``).

    A benchmark with no notion of axis (BEC-Pro, WinoBias, ...: gender benchmarks), one
    whose ``spec`` chose its scope (``bias_type``, ``tests``), or ``axes=None`` gives one
    benchmark, unscoped as today. Otherwise one per axis that has a category or tests for
    it; an axis without one (a user's attribute file) is left out when others have one.

    Raises:
        CdsbiasError: None of ``axes`` has a category for it (the message names the option
            to set), or what :func:`build_benchmark` raises.
    """
    cls = get_benchmark(name)
    spec = dict(spec or {})
    chosen = cls.axis_option_names and all(
        spec.get(option) is not None for option in cls.axis_option_names
    )
    if not axes or not cls.axis_option_names or chosen:
        return [build_benchmark(name, spec, **defaults)]
    built, refused = [], None
    for axis in axes:
        try:
            cls.axis_options(axis)
        except CdsbiasError as exc:
            refused = refused or exc
            continue
        benchmark = build_benchmark(name, spec, axis=axis, **defaults)
        if benchmark.axis is None:  # its data chose the scope (one SEAT test file): once
            return [benchmark]
        built.append(benchmark)
    if not built and refused is not None:
        raise refused
    return built


__all__ = [
    "COMMON_KEYS",
    "DEFAULT_BENCHMARKS",
    "OPTION_SHORTHAND_FLAGS",
    "REGISTRY",
    "Benchmark",
    "BenchmarkResult",
    "Metric",
    "Snapshot",
    "UndefinedStatisticWarning",
    "build_axis_benchmarks",
    "build_benchmark",
    "check_scorer_options",
    "format_value",
    "get_benchmark",
    "list_benchmarks",
    "load_all",
    "normalize_specs",
    "register",
    "result_folder",
    "result_folder_name",
    "result_key",
    "split_key",
    "to_json",
    "write_result",
]
