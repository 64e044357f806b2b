"""Partial fine-tuning: only the parameters that glob patterns name train (e.g. the last
layer and the MLM head); everything else is frozen and checkpoints hold full weights.

A tensor shared under several names (BERT's decoder weight *is* the word-embedding matrix)
trains when any of its names matches and no ``!`` pattern matches any of them: ``cls.*``
thus also trains the word embeddings unless ``!cls.predictions.decoder.weight`` keeps them
frozen (a warning says so).
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cdsbias.errors import CdsbiasError, close_names
from cdsbias.methods.base import Method, register


@dataclass
class PartialOptions:
    """Which parameters train."""

    trainable_parameters: list[str] | None = field(
        default=None,
        metadata={
            "help": "Partial fine-tuning: glob patterns over parameter names that train, e.g. "
            "[bert.encoder.layer.11.*, cls.*]; everything else is frozen. A leading ! "
            "excludes. Tied tensors train if any of their names matches: cls.* also trains "
            "BERT's word embeddings unless !cls.predictions.decoder.weight is added."
        },
    )

    def __post_init__(self) -> None:
        patterns = self.trainable_parameters
        if patterns is None:
            return
        if not patterns or not all(isinstance(p, str) and p.strip("! ") for p in patterns):
            raise CdsbiasError("trainable_parameters needs non-empty glob patterns.")
        torn = [p for p in patterns if p.startswith("[") or p.endswith("]")]
        if torn:  # YAML reads an unquoted !name as a tag, and the list as plain text
            raise CdsbiasError(
                f"trainable_parameters: {torn[0]!r} is part of a list YAML could not read; "
                "quote patterns that start with !, e.g. '[cls.*, \"!cls.predictions.*\"]'."
            )


@register
class PartialFineTuning(Method):
    name = "partial"
    role = "weights"
    title = "partial fine-tuning"
    description = "only the parameters named by trainable_parameters were trained"
    Options = PartialOptions
    selected_by = "trainable_parameters: [GLOB, ...]"
    example: ClassVar[dict[str, Any]] = {
        "trainable_parameters": ["bert.encoder.layer.1.*", "cls.predictions.transform.*"]
    }

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        return values.get("trainable_parameters") is not None

    def prepare(self, model: Any, tokenizer: Any = None) -> Any:
        freeze_except(model, self.options.trainable_parameters)
        return model

    def label(self, model: Any = None) -> str:
        return f"{self.title} ({', '.join(self.options.trainable_parameters)})"

    def card_text(self) -> str:
        return (
            "only the parameters matching "
            f"`{', '.join(self.options.trainable_parameters)}` were trained; the rest stayed "
            "frozen"
        )


def _matches(names: list[str], patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns)


def freeze_except(model: Any, patterns: list[str]) -> list[str]:
    """Freezes every parameter of ``model`` except those ``patterns`` select.

    Returns:
        The trainable parameters, one name per tensor.

    Raises:
        CdsbiasError: A pattern that matches no parameter (naming a few real ones), or
            patterns that leave nothing to train.
    """
    include = [p for p in patterns if not p.startswith("!")]
    exclude = [p[1:] for p in patterns if p.startswith("!")]
    aliases: dict[int, list[str]] = {}  # one tensor, every name it has (tied weights)
    tensors: dict[int, Any] = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        aliases.setdefault(id(param), []).append(name)
        tensors[id(param)] = param
    every_name = [n for names in aliases.values() for n in names]
    for pattern in include + exclude:
        if not any(fnmatch.fnmatchcase(n, pattern) for n in every_name):
            close = close_names(pattern.rstrip(".*"), every_name, n=3)
            shown = close or [every_name[0], every_name[len(every_name) // 2], every_name[-1]]
            raise CdsbiasError(
                f"trainable_parameters: '{pattern}' matches no parameter of this "
                f"{model.config.model_type} model; real names: {', '.join(shown)}."
            )
    trainable, tied = [], []
    for key, names in aliases.items():
        train = _matches(names, include) and not _matches(names, exclude)
        tensors[key].requires_grad_(train)
        if train:
            trainable.append(names[0])
            unmatched = [n for n in names if not _matches([n], include)]
            if unmatched:
                matched = next(n for n in names if _matches([n], include))
                tied.append(f"{', '.join(unmatched)} (tied to {matched})")
    if not trainable:
        raise CdsbiasError(f"trainable_parameters {patterns} leave no parameter to train.")
    if tied:
        warnings.warn(
            f"trainable_parameters: tied tensors also train under names no pattern "
            f"selects: {'; '.join(tied)}. Add !NAME to keep them frozen.",
            stacklevel=2,
        )
    return trainable
