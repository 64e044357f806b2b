"""Bias axes: a registry of name -> the module that builds the axis, and user files.

``get_axis("religion")`` builds a registered axis (cached); ``get_axis("words.tsv")`` or
``get_axis("bias_attribute_words.json#race")`` reads a user's attribute set
(cdsbias.axes.files). An unknown name is a one-line error with a did-you-mean. Adding an
axis is one line in :data:`AXES` plus its module (a ``build()`` returning a
:class:`~cdsbias.axes.base.BiasAxis`) and, usually, its word file in
``cdsbias/resources/axes``. A *variant* (``race@bias-bench``: the race axis with bias-bench's
own word lists, cdsbias.axes.bias_bench) is registered the same way, as
``"module:function"``.

CDS, the debiasing methods and the benchmarks read an axis from here; nothing above keeps
its own copy of an axis's words, prefix or test names.
"""

from __future__ import annotations

import importlib
from functools import cache

from cdsbias.axes.base import TUPLE_FORMS, BiasAxis
from cdsbias.axes.files import SUFFIXES, read_axis_file, split_reference
from cdsbias.errors import CdsbiasError, unknown_name_error

#: Axis name -> the module whose ``build()`` makes it.
AXES: dict[str, str] = {
    "gender": "cdsbias.axes.gender",
    "race": "cdsbias.axes.race",
    "religion": "cdsbias.axes.religion",
    "age": "cdsbias.axes.age",
    "disability": "cdsbias.axes.disability",
    "sexual_orientation": "cdsbias.axes.sexual_orientation",
    "nationality": "cdsbias.axes.nationality",
    "physical_appearance": "cdsbias.axes.physical_appearance",
    "socioeconomic": "cdsbias.axes.socioeconomic",
    "gender@bias-bench": "cdsbias.axes.bias_bench:gender",
    "race@bias-bench": "cdsbias.axes.bias_bench:race",
    "religion@bias-bench": "cdsbias.axes.bias_bench:religion",
}
DEFAULT_AXIS = "gender"

__all__ = [
    "AXES",
    "DEFAULT_AXIS",
    "TUPLE_FORMS",
    "BiasAxis",
    "get_axis",
    "is_axis_file",
    "read_axis_file",
]


def is_axis_file(reference: str) -> bool:
    """Whether ``reference`` names an attribute file rather than a registered axis."""
    return split_reference(str(reference))[0].suffix.lower() in SUFFIXES


def registry_name(reference: str) -> str:
    """The :data:`AXES` key ``reference`` spells: lower case, hyphens in the axis's own name
    read as underscores (CrowS-Pairs and bias-bench spell categories "sexual-orientation"),
    a variant's word-list suffix kept as written (``race@bias-bench``)."""
    axis, at, lists = reference.lower().partition("@")
    return axis.replace("-", "_") + at + lists


@cache
def _registered(name: str) -> BiasAxis:
    module, _, function = AXES[name].partition(":")
    return getattr(importlib.import_module(module), function or "build")()


def get_axis(reference: str | BiasAxis = DEFAULT_AXIS) -> BiasAxis:
    """The axis ``reference`` names: a registered name, or a ``.json[#key]``/``.tsv`` file.

    Raises:
        CdsbiasError: An unknown name (with the nearest one), or a bad attribute file
            (cdsbias.axes.files).
    """
    if isinstance(reference, BiasAxis):
        return reference
    reference = str(reference).strip()
    if is_axis_file(reference):
        return read_axis_file(reference)
    name = registry_name(reference)
    if name not in AXES:
        error = unknown_name_error("bias axis", reference, AXES)
        raise CdsbiasError(
            f"{error}; or give an attribute file of your own: FILE.tsv (a header of group "
            "names) or bias-bench's FILE.json[#key]."
        )
    return _registered(name)


def get_axes(references: list[str] | tuple[str, ...]) -> list[BiasAxis]:
    """Several axes (``bias_axes``); a name given twice is an error."""
    axes = [get_axis(reference) for reference in references]
    names = [axis.name for axis in axes]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise CdsbiasError(f"bias_axes names {', '.join(repeated)} more than once")
    return axes
