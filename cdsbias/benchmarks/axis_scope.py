"""Scoping a benchmark to a bias axis, and the result keys that name the axis.

A benchmark with a category or test set per axis declares the options that choose it
(:attr:`cdsbias.benchmarks.Benchmark.axis_option_names`, e.g. ``bias_type``) and how an
axis fills them (:meth:`~cdsbias.benchmarks.Benchmark.axis_options`, read from
:class:`cdsbias.axes.BiasAxis`). Here: what a benchmark built with an axis gets, and the key
its results go under (``NAME[AXIS]``), so one run can score a benchmark on several axes,
and the folder a key's ``rows.tsv`` and ``summary.json`` go in (``NAME@AXIS``: brackets are
glob characters, so ``crows_pairs[race]`` would need quoting in every shell command).
"""

from __future__ import annotations

import contextlib
import re
import warnings
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError


def axis_key(name: str, axis: str | None) -> str:
    """``name`` or, scoped to an axis, ``name[axis]``.

    >>> axis_key("crows_pairs", "race"), axis_key("becpro", None)
    ('crows_pairs[race]', 'becpro')
    """
    return name if axis is None else f"{name}[{axis}]"


def split_key(key: str) -> tuple[str, str | None]:
    """The inverse of :func:`axis_key`.

    >>> split_key("crows_pairs[race]"), split_key("becpro")
    (('crows_pairs', 'race'), ('becpro', None))
    """
    name, bracket, rest = key.partition("[")
    if bracket and rest.endswith("]"):
        return name, rest[:-1]
    return key, None


#: Between a benchmark's name and its axis in a result folder's name.
FOLDER_AXIS_MARK = "@"
# Characters a folder name built from a user's axis name does not keep: anything but
# letters, digits, "_", ".", "-" and "@" (globs, spaces, separators). A variant's "@" stays
# ("crows_pairs@race@bias-bench"): the key splits at the first one.
_NOT_IN_FOLDER_NAME = re.compile(r"[^\w.@-]+")


def result_folder_name(key: str) -> str:
    """The folder of result key ``key``: ``NAME@AXIS`` for ``NAME[AXIS]``, which a shell
    takes as it is (no glob characters); an axis name's other characters become ``_``.

    >>> result_folder_name("crows_pairs[religion]"), result_folder_name("becpro")
    ('crows_pairs@religion', 'becpro')
    >>> result_folder_name("crows_pairs[race@bias-bench]")
    'crows_pairs@race@bias-bench'
    """
    name, axis = split_key(key)
    if axis is None:
        return key
    return f"{name}{FOLDER_AXIS_MARK}{_NOT_IN_FOLDER_NAME.sub('_', axis)}"


def result_key(folder_name: str) -> str:
    """The result key of a result folder's name (the inverse of :func:`result_folder_name`
    for axis names it keeps as they are); a folder named ``NAME[AXIS]`` is its own key.

    >>> result_key("crows_pairs@religion"), result_key("crows_pairs[religion]")
    ('crows_pairs[religion]', 'crows_pairs[religion]')
    >>> result_key("crows_pairs@race@bias-bench")
    'crows_pairs[race@bias-bench]'
    """
    name, mark, axis = folder_name.partition(FOLDER_AXIS_MARK)
    return axis_key(name, axis) if mark and name and axis else folder_name


def result_folder(parent: str | Path, key: str) -> Path:
    """Where the result of ``key`` lies below ``parent``: ``parent/NAME@AXIS``, or, when
    only a folder named as the key exists (``parent/NAME[AXIS]``, as cdsbias wrote before
    issue 36), that one, so those runs keep being read.

    Every reader and writer of a result folder goes through this function or
    :func:`result_folder_name`.
    """
    folder = Path(parent) / result_folder_name(key)
    if not folder.exists() and (Path(parent) / key).is_dir():
        return Path(parent) / key
    return folder


def scope_options(benchmark: Any, axis: Any, options: dict[str, Any]) -> tuple[dict, str | None]:
    """``options`` with the axis's scope where they leave it open, and the name of the axis
    the benchmark then measures.

    Options the user set win over the axis: when they choose the whole scope, the benchmark
    is scoped to the axis only if they choose the axis's own (``bias_type: race`` for the
    race axis, read as ``race-color``), else to none.

    Args:
        benchmark: The benchmark being built (its class's ``axis_option_names``,
            ``axis_options`` and ``parse_options``).
        axis: A registered name, an attribute file or a :class:`~cdsbias.axes.BiasAxis`.
        options: The options given.

    Raises:
        CdsbiasError: An unknown axis, or one without a category for the benchmark while
            the options leave the scope open (the message names the option to set).
    """
    from cdsbias.axes import get_axis

    names = benchmark.axis_option_names
    given = {k: options[k] for k in names if options.get(k) is not None}
    if len(given) < len(names):  # the axis fills the scope left open
        axis = get_axis(axis)
        return {**options, **benchmark.axis_options(axis), **given}, axis.name
    try:
        axis = get_axis(axis)
        scope = benchmark.parse_options(benchmark.axis_options(axis))
    except CdsbiasError:  # an axis without a category: the options' scope, unnamed
        return options, None
    chosen = benchmark.parse_options(given)
    same = all(getattr(chosen, k) == getattr(scope, k) for k in names)
    return options, axis.name if same else None


def no_category_error(
    benchmark: str, axis: Any, what: str, option: str, choices: list[str] | tuple[str, ...]
) -> CdsbiasError:
    """The error for an axis (a user's attribute file) that names no category of
    ``benchmark``: which option to set, its choices, and how (CLI and recipe)."""
    return CdsbiasError(
        f"bias axis '{axis.name}' ({axis.source}) has no {what}; set the {benchmark} option "
        f"{option} to one of {', '.join(choices)} (--option {benchmark}.{option}=TYPE, or in "
        f"a recipe bias_benchmarks: {{{benchmark}: {{{option}: TYPE}}}})"
    )


def warn_unmeasured_axes(measured: list[Any], benchmarks: list[Any], listed: Any = None) -> None:
    """Warns of each measured axis other than gender that no benchmark of the recipe
    scores (as ``evaluate --axis`` warns of gender-only benchmarks), naming the benchmarks
    that could score it, if any (``listed``: the recipe's ``bias_axes``)."""
    from cdsbias.axes import DEFAULT_AXIS
    from cdsbias.benchmarks import get_benchmark, list_benchmarks

    scored = {benchmark.axis for benchmark in benchmarks}
    chosen = ", ".join(dict.fromkeys(b.name for b in benchmarks)) or "none"
    for axis in measured:
        if axis.name == DEFAULT_AXIS or axis.name in scored:
            continue
        takers = []
        for name in list_benchmarks():
            cls = get_benchmark(name)
            if cls.axis_option_names:
                with contextlib.suppress(CdsbiasError):
                    cls.axis_options(axis)
                    takers.append(name)
        fix = (
            f"add one that scores it ({', '.join(takers)}) to bias_benchmarks"
            if takers
            else "no registered benchmark has a category or test set for it, so only a "
            "benchmark's data_file of your own can measure it"
        )
        if listed and axis.name in {str(a) for a in listed}:
            fix += ", or drop it from bias_axes"
        key = "bias_axes" if listed else "bias_axis"
        # stacklevel 2: the caller's line, one location, so the warning is printed once
        # however often the benchmarks are built (recipe validation, then the run).
        warnings.warn(
            f"{key} names {axis.name}, but no benchmark of bias_benchmarks ({chosen}) "
            f"scores it, so the run's bias points say nothing about {axis.name}; {fix}.",
            stacklevel=2,
        )
