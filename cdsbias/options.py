"""Typed ``key=value`` options: one parser and one checker for recipes and benchmarks.

Recipe overrides (``train.py RECIPE key=value``), benchmark options on the command line
(``cdsbias evaluate --option key=value``) and the per-benchmark mappings of a recipe
(``bias_benchmarks: {becpro: {n_resamples: 2000}}``) all read their values as YAML
scalars and check them against the annotations of a dataclass, so ``2e-5``, ``true``,
``[1, 2]`` and ``none`` mean the same thing everywhere.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import yaml

from cdsbias.errors import CdsbiasError, did_you_mean

#: Text that means true or false (YAML 1.1 words, as a user may pass them from Python).
_BOOLEANS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def parse_value(text: str) -> Any:
    """A ``key=value`` value read as a YAML scalar (``[a, b]`` is a list, ``true`` a bool).

    Type-aware coercion happens in :func:`check_value`: ``2e-5`` (text to YAML 1.1) is a
    number where a number is expected, ``none`` is None where None is allowed. An empty
    value is ``None``.
    """
    if not text.strip():
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def parse_key_values(items: Iterable[str], what: str = "override") -> dict[str, Any]:
    """``["lr=2e-5", "report_to=none"]`` -> ``{"lr": 2e-5, "report_to": None}``.

    Raises:
        CdsbiasError: An item without ``=`` or with an empty key.
    """
    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CdsbiasError(f"{what} {item!r} is not key=value.")
        parsed[key.strip()] = parse_value(value.strip())
    return parsed


def describe_type(annotation: Any) -> str:
    """A short readable name of an annotation: ``word | piece``, ``int``, ``list of str``."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return " | ".join(str(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(describe_type(a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return "none"
    if origin in (list, tuple):
        inner = typing.get_args(annotation)
        return f"list of {describe_type(inner[0])}" if inner else "list"
    return getattr(annotation, "__name__", str(annotation))


def check_value(key: str, value: Any, annotation: Any, what: str = "recipe key") -> Any:
    """Validates (and lightly coerces) ``value`` against a dataclass annotation.

    Supports ``bool``, ``int``, ``float``, ``str``, ``Literal[...]`` choices, ``X | None``,
    ``list[X]`` (a comma-separated string is a list), ``dict``, enums and ``Any``.

    Raises:
        CdsbiasError: Naming the key, what it expects and what it got.
    """
    if isinstance(annotation, str):
        annotation = {"str": str, "int": int, "float": float, "bool": bool}.get(annotation, Any)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any:
        return value
    if origin is Literal:
        if value not in args and isinstance(value, int | float) and str(value) in args:
            value = str(value)  # YAML reads `types=1` as a number; the choice is "1"
        if value not in args:
            choices = ", ".join(str(a) for a in args)
            hint = did_you_mean(str(value), [str(a) for a in args])
            message = f"{what} '{key}' must be one of {choices}, got {value!r}. {hint}"
            raise CdsbiasError(message.strip())
        return value
    if origin in (typing.Union, types.UnionType):
        if type(None) in args and value is None:
            return None
        # "none" means None only where text is not itself a valid value (report_to: none
        # is transformers' own word, but compat=none switches the mode off).
        takes_text = any(a is str or typing.get_origin(a) in (list, tuple) for a in args)
        if type(None) in args and not takes_text and str(value).lower() in ("none", "null"):
            return None
        errors = []
        # A list's error where a list was given (or "a,b"), else a scalar's: `x | list[x]`
        # then says which choice was meant instead of naming the whole union.
        wants_list = isinstance(value, list | tuple) or (isinstance(value, str) and "," in value)
        for option in args:
            if option is type(None):
                continue
            try:
                return check_value(key, value, option, what)
            except CdsbiasError as exc:
                is_list = typing.get_origin(option) in (list, tuple)
                errors.append((is_list == wants_list, str(exc)))
        closest = list(dict.fromkeys(text for fits, text in errors if fits))
        if len(closest) == 1 and isinstance(value, str | list | tuple):
            raise CdsbiasError(closest[0])
        if len(errors) == 1:
            raise CdsbiasError(errors[0][1])
        raise CdsbiasError(f"{what} '{key}' expects {describe_type(annotation)}, got {value!r}.")
    if origin in (list, tuple):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list | tuple):
            raise CdsbiasError(f"{what} '{key}' expects a list, got {value!r}.")
        if not value:
            raise CdsbiasError(f"{what} '{key}' needs at least one value.")
        if args and args[0] is not Any:
            return [check_value(key, item, args[0], what) for item in value]
        return list(value)
    if origin is dict or annotation is dict:
        if not isinstance(value, dict):
            raise CdsbiasError(f"{what} '{key}' expects a mapping, got {value!r}.")
        return value
    if annotation is bool:
        if isinstance(value, str) and value.strip().lower() in _BOOLEANS:
            return _BOOLEANS[value.strip().lower()]
        if not isinstance(value, bool):
            raise CdsbiasError(f"{what} '{key}' expects true or false, got {value!r}.")
        return value
    if annotation is int:
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise CdsbiasError(f"{what} '{key}' expects an integer, got {value!r}.")
        return value
    if annotation is float:
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CdsbiasError(f"{what} '{key}' expects a number, got {value!r}.")
        return float(value)
    if annotation is str:
        if isinstance(value, dict | list):
            raise CdsbiasError(f"{what} '{key}' expects text, got {value!r}.")
        return str(value)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        allowed = [m.value for m in annotation]
        if value not in allowed and value not in [m.name for m in annotation]:
            raise CdsbiasError(
                f"{what} '{key}' must be one of {', '.join(map(str, allowed))}, got {value!r}."
            )
        return value
    return value


def unknown_key_error(key: str, valid: Iterable[str], what: str) -> CdsbiasError:
    """``Unknown <what> 'x'. Did you mean 'y'?`` (or the list of valid keys)."""
    names = sorted(valid)
    hint = did_you_mean(key, names)
    if hint:
        return CdsbiasError(f"Unknown {what} '{key}'. {hint}")
    listing = ", ".join(names) if names else "none"
    return CdsbiasError(f"Unknown {what} '{key}'; valid: {listing}.")


def build_dataclass(cls: type, values: Mapping[str, Any], what: str) -> Any:
    """Instantiates the dataclass ``cls`` from ``values``, checking every key and type.

    A field's ``metadata["min"]`` is its smallest allowed value. ``__post_init__`` of ``cls``
    runs last and may raise :class:`CdsbiasError` for checks across fields.

    Raises:
        CdsbiasError: Unknown key (with the closest valid one) or a value of the wrong type.
    """
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls)
    checked: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in fields:
            raise unknown_key_error(key, fields, what)
        checked[name] = check_value(name, value, hints.get(name, Any), what)
        minimum = fields[name].metadata.get("min")
        if minimum is not None and checked[name] is not None and checked[name] < minimum:
            raise CdsbiasError(f"{what} '{name}' must be at least {minimum}, got {value!r}.")
    try:
        return cls(**checked)
    except TypeError as exc:
        raise CdsbiasError(f"{what}: {exc}") from None


def field_help(cls: type) -> list[tuple[str, str, Any, str]]:
    """``(name, type, default, help)`` of every init field of the dataclass ``cls``."""
    hints = typing.get_type_hints(cls)
    rows = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        rows.append((f.name, describe_type(hints.get(f.name, Any)), default,
                     f.metadata.get("help", "")))  # fmt: skip
    return rows


def options_text(cls: type) -> str:
    """The options of the dataclass ``cls`` as ``cdsbias benchmarks NAME`` and ``cdsbias
    methods NAME`` print them: ``  key (type, default D)`` and the help text beneath."""
    lines = []
    for key, kind, default, text in field_help(cls):
        lines.append(f"  {key} ({kind}, default {default!r})")
        if text:
            lines.append(f"      {text}")
    return "\n".join(lines) if lines else "  (none)"
