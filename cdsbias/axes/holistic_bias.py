"""Which HolisticBias descriptors name an axis's groups, read from the dataset's own file.

HolisticBias (Smith et al. 2022, "I'm sorry to hear that": Finding New Biases in Language
Models with a Holistic Descriptor Dataset, EMNLP; facebookresearch/ResponsibleNLP, data
CC BY-SA 4.0) groups its ~600 descriptors by axis and, within an axis, by bucket
(``descriptors.json``: ``{"age": {"child": ["adolescent", ...], "old": [...]}, ...}``; an
entry is a string or ``{"descriptor": ..., "preference": ..., "gender": ...}``). A shipped
axis declares, as plain data, the HolisticBias axis it maps to and, per group, which of
that axis's descriptors name the group (:attr:`cdsbias.axes.BiasAxis.holistic_bias_buckets`):
an entry ``"bucket"`` takes every descriptor of the bucket, ``"bucket:descriptor"`` one
descriptor (where a bucket mixes groups, as ``ability``'s ``unspecific`` holds both
"disabled" and "nondisabled"). The descriptors themselves are read from the fetched
dataset, never copied here (its licence is share-alike).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cdsbias.axes.base import BiasAxis
from cdsbias.errors import CdsbiasError

#: The file, inside the dataset's version folder.
DESCRIPTORS_FILE = "descriptors.json"
#: The dataset version the shipped axes were mapped against.
VERSION = "v1.1"


def descriptors_path(location: str | Path) -> Path:
    """``descriptors.json`` given itself, its folder, or the dataset folder above ``v1.1``."""
    path = Path(location)
    for candidate in (path, path / DESCRIPTORS_FILE, path / VERSION / DESCRIPTORS_FILE):
        if candidate.is_file():
            return candidate
    raise CdsbiasError(
        f"HolisticBias descriptors not found at {path} (looked for {DESCRIPTORS_FILE} there "
        f"and in {VERSION}/); give the dataset folder or its {VERSION}/{DESCRIPTORS_FILE}"
    )


def read_descriptors(location: str | Path) -> dict[str, dict[str, list[str]]]:
    """The dataset's descriptors: axis -> bucket -> descriptor texts, in file order.

    Raises:
        CdsbiasError: A missing file, invalid JSON, or a file not of the dataset's shape.
    """
    path = descriptors_path(location)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise CdsbiasError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise CdsbiasError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    shape = 'expected HolisticBias\'s {"axis": {"bucket": ["descriptor", ...]}}'
    if not isinstance(data, dict) or not data:
        raise CdsbiasError(f"{path}: {shape}")
    result: dict[str, dict[str, list[str]]] = {}
    for axis, buckets in data.items():
        if not isinstance(buckets, dict):
            raise CdsbiasError(f"{path}: axis '{axis}' is not an object of buckets; {shape}")
        result[axis] = {
            bucket: [_descriptor(entry, f"{path}: {axis}/{bucket}") for entry in entries]
            for bucket, entries in _buckets(buckets, f"{path}: {axis}", shape)
        }
    return result


def _buckets(buckets: dict, where: str, shape: str) -> list[tuple[str, list[Any]]]:
    for bucket, entries in buckets.items():
        if not isinstance(entries, list):
            raise CdsbiasError(f"{where}/{bucket} is not a list of descriptors; {shape}")
    return list(buckets.items())


def _descriptor(entry: object, where: str) -> str:
    text = entry.get("descriptor") if isinstance(entry, dict) else entry
    if not isinstance(text, str) or not text.strip():
        raise CdsbiasError(f"{where}: {entry!r} is not a descriptor")
    return text


def axis_descriptors(axis: BiasAxis, location: str | Path) -> dict[str, tuple[str, ...]]:
    """Per group of ``axis``, the HolisticBias descriptors its mapping names.

    Args:
        axis: A shipped axis with a HolisticBias mapping.
        location: The dataset folder (or its ``descriptors.json``).

    Raises:
        CdsbiasError: The axis has no mapping, or the file lacks the axis, a bucket or a
            descriptor the mapping names (another version of the dataset).
    """
    if axis.holistic_bias_axis is None:
        raise CdsbiasError(f"bias axis '{axis.name}' maps to no HolisticBias axis")
    data = read_descriptors(location)
    name = axis.holistic_bias_axis
    if name not in data:
        raise CdsbiasError(
            f"{descriptors_path(location)} has no axis '{name}'; it has {', '.join(data)} "
            f"(bias axis '{axis.name}' was mapped against HolisticBias {VERSION})"
        )
    buckets = data[name]
    result = {}
    for group, entries in zip(axis.groups, axis.holistic_bias_buckets, strict=True):
        found: list[str] = []
        for entry in entries:
            bucket, _, one = entry.partition(":")
            if bucket not in buckets:
                raise CdsbiasError(
                    f"{descriptors_path(location)}: axis '{name}' has no bucket '{bucket}' "
                    f"(named by bias axis '{axis.name}', group '{group}'); it has "
                    f"{', '.join(buckets)}"
                )
            if one and one not in buckets[bucket]:
                raise CdsbiasError(
                    f"{descriptors_path(location)}: {name}/{bucket} has no descriptor '{one}' "
                    f"(named by bias axis '{axis.name}', group '{group}')"
                )
            found += [one] if one else buckets[bucket]
        result[group] = tuple(dict.fromkeys(found))
    return result
