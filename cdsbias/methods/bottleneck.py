"""Bottleneck adapters for masked LMs (Pfeiffer et al. 2021; ADELE, Lauscher et al. 2021).

One small network per transformer layer: a down-projection, a non-linearity, an
up-projection and a residual connection of its own. It sits on the layer's feed-forward
output, before that layer's residual connection (Pfeiffer's placement: one adapter per
layer, after the FFN; none after attention)::

    h = FFN(x)                          # the layer's dense output (and its dropout)
    h = h + up(act(down(h)))            # the adapter
    out = LayerNorm(h + x)              # post-LN families; ModernBERT (pre-LN): x + h

The up-projection starts at exactly zero, so an adapted model computes exactly what its
base computes until the first training step. Only the adapter is trained (as in ADELE);
the base stays frozen. A forward hook on the module that produces ``h`` applies it, so
the base model's own weights and parameter names are untouched:

* bert, roberta, xlm-roberta, camembert, electra, deberta-v2: hook on
  ``*.layer.N.output.dropout`` (dense, then dropout, before ``LayerNorm(h + x)``); the
  adapter is ``*.layer.N.output.bottleneck``;
* distilbert: hook on ``*.layer.N.ffn`` (lin1, activation, lin2, dropout); adapter
  ``*.layer.N.bottleneck``;
* albert: hook on ``*.albert_layers.N.ffn_output``; adapter ``*.albert_layers.N.bottleneck``;
* modernbert: hook on ``*.layers.N.mlp`` (before ``x + h``); adapter ``*.layers.N.bottleneck``.

ALBERT shares one layer across its depth, so it gets one adapter, shared the same way.

A folder holds ``bottleneck_config.json`` (the settings and the base model it adapts) and
``bottleneck_adapter.safetensors`` (the adapter weights only)::

    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from cdsbias.methods.bottleneck import BottleneckConfig, load_bottleneck

    config = BottleneckConfig.load("runs/gap_cda_adapter")
    model = AutoModelForMaskedLM.from_pretrained(config.base_model_name_or_path)
    model = load_bottleneck(model, "runs/gap_cda_adapter").eval()
    tokenizer = AutoTokenizer.from_pretrained(config.base_model_name_or_path)
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from cdsbias.errors import CdsbiasError

CONFIG_FILE = "bottleneck_config.json"
WEIGHTS_FILE = "bottleneck_adapter.safetensors"
#: Name of the adapter module on each adapted block.
ATTRIBUTE = "bottleneck"

_POST_LN_OUTPUT = r"\.layer\.\d+\.output\.dropout"
#: model_type -> pattern of the modules whose output is a layer's feed-forward output,
#: right before the layer's residual connection.
HOOK_POINTS: dict[str, str] = {
    "bert": _POST_LN_OUTPUT,
    "roberta": _POST_LN_OUTPUT,
    "xlm-roberta": _POST_LN_OUTPUT,
    "camembert": _POST_LN_OUTPUT,
    "electra": _POST_LN_OUTPUT,
    "deberta-v2": _POST_LN_OUTPUT,
    "distilbert": r"\.layer\.\d+\.ffn",
    "albert": r"\.albert_layers\.\d+\.ffn_output",
    "modernbert": r"\.layers\.\d+\.mlp",
}
NON_LINEARITIES: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "tanh": nn.Tanh,
    "silu": nn.SiLU,
}


@dataclass(frozen=True)
class BottleneckConfig:
    """What a bottleneck adapter folder needs besides its weights.

    Attributes:
        model_type: The ``model_type`` of the base model (its hook points).
        hidden_size: The base model's hidden size.
        reduction_factor: Hidden size / bottleneck size (16 in Pfeiffer et al. and ADELE).
        non_linearity: One of :data:`NON_LINEARITIES`.
        base_model_name_or_path: Hub id or folder of the base model.
    """

    model_type: str
    hidden_size: int
    reduction_factor: int = 16
    non_linearity: str = "relu"
    base_model_name_or_path: str | None = None

    @property
    def bottleneck_size(self) -> int:
        """Units of the down-projection (at least one)."""
        return max(1, self.hidden_size // self.reduction_factor)

    def save(self, folder: str | Path) -> Path:
        """Writes ``CONFIG_FILE`` into ``folder``; returns its path."""
        path = Path(folder) / CONFIG_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dataclasses.asdict(self), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, folder: str | Path) -> BottleneckConfig:
        """Reads ``CONFIG_FILE`` of ``folder``.

        Raises:
            CdsbiasError: The file is missing, not JSON, or has unknown or missing keys.
        """
        path = Path(folder) / CONFIG_FILE
        if not path.is_file():
            raise CdsbiasError(f"{folder} is not a bottleneck adapter folder (no {CONFIG_FILE}).")
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, TypeError) as exc:
            raise CdsbiasError(f"{path} is not a valid bottleneck adapter config: {exc}") from None


def is_bottleneck_folder(path: str | Path) -> bool:
    """Whether ``path`` is a folder holding a bottleneck adapter."""
    return (Path(path) / CONFIG_FILE).is_file()


class Bottleneck(nn.Module):
    """``h + up(act(down(h)))``; ``up`` starts at zero, so at first it returns ``h`` exactly.

    Args:
        hidden_size: Width of ``h``.
        bottleneck_size: Width of the down-projection.
        non_linearity: One of :data:`NON_LINEARITIES`.
    """

    def __init__(self, hidden_size: int, bottleneck_size: int, non_linearity: str) -> None:
        super().__init__()
        self.down = nn.Linear(hidden_size, bottleneck_size)
        self.act = NON_LINEARITIES[non_linearity]()
        self.up = nn.Linear(bottleneck_size, hidden_size)
        # BERT's initializer range for the down-projection; zeros for the up-projection make
        # the adapter an identity map until training moves it.
        nn.init.normal_(self.down.weight, std=0.02)
        nn.init.zeros_(self.down.bias)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)

    #: False while :func:`disabled_adapters` is active: the hook then leaves ``h`` alone.
    enabled: bool = True

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden + self.up(self.act(self.down(hidden)))

    def hook(self, _module: nn.Module, _args: Any, output: torch.Tensor) -> torch.Tensor | None:
        """Forward hook on the module that produces the feed-forward output."""
        return self(output) if self.enabled else None


def hook_points(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """``(name, module)`` of the modules whose output each adapter transforms.

    Raises:
        CdsbiasError: The architecture is not supported, or has none of its hook points.
    """
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    pattern = HOOK_POINTS.get(str(model_type))
    if pattern is None:
        raise CdsbiasError(
            f"Bottleneck adapters do not know where to sit in model_type '{model_type}'; "
            f"supported: {', '.join(sorted(HOOK_POINTS))}. Use peft_method: lora instead."
        )
    found = [(n, m) for n, m in model.named_modules() if re.search(pattern + "$", n)]
    if not found:
        raise CdsbiasError(
            f"No module of this {model_type} model matches the adapter position {pattern!r}; "
            "its layout differs from the transformers implementation cdsbias knows."
        )
    return found


def _parent(model: nn.Module, name: str) -> tuple[str, nn.Module]:
    parent_name = name.rsplit(".", 1)[0]
    return parent_name, model.get_submodule(parent_name)


def adapters(model: nn.Module) -> dict[str, Bottleneck]:
    """The attached adapters by module name (empty when there are none)."""
    return {n: m for n, m in model.named_modules() if isinstance(m, Bottleneck)}


@contextmanager
def disabled_adapters(model: nn.Module) -> Iterator[nn.Module]:
    """Runs ``model`` as its base inside the block: every adapter's hook passes ``h`` on
    untouched, so the outputs are the base model's bit for bit (peft's
    ``model.disable_adapter()`` for the bottleneck adapter; no second copy of the model).

    Raises:
        CdsbiasError: ``model`` has no bottleneck adapters.
    """
    attached = list(adapters(model).values())
    if not attached:
        raise CdsbiasError("The model has no bottleneck adapters to switch off.")
    previous = [adapter.enabled for adapter in attached]
    for adapter in attached:
        adapter.enabled = False
    try:
        yield model
    finally:
        for adapter, state in zip(attached, previous, strict=True):
            adapter.enabled = state


def add_bottleneck_adapters(
    model: nn.Module,
    *,
    reduction_factor: int = 16,
    non_linearity: str = "relu",
    base_model_name_or_path: str | None = None,
) -> BottleneckConfig:
    """Attaches a fresh adapter to every layer of ``model`` (in place).

    Nothing is frozen here; training code decides what trains. The configuration is kept
    as ``model.bottleneck_config`` for :func:`save_bottleneck`.

    Args:
        model: A ``*ForMaskedLM`` of a family in :data:`HOOK_POINTS`.
        reduction_factor: Hidden size / bottleneck size.
        non_linearity: One of :data:`NON_LINEARITIES`.
        base_model_name_or_path: The base model an adapter folder will name.

    Returns:
        The adapter configuration.

    Raises:
        CdsbiasError: Unsupported architecture, adapters already attached, a bad setting.
    """
    if adapters(model):
        raise CdsbiasError("This model already has bottleneck adapters.")
    if non_linearity not in NON_LINEARITIES:
        raise CdsbiasError(
            f"Unknown adapter non-linearity '{non_linearity}'; use one of "
            f"{', '.join(NON_LINEARITIES)}."
        )
    if reduction_factor < 1:
        raise CdsbiasError(
            f"The adapter reduction factor must be at least 1, got {reduction_factor}."
        )
    config = BottleneckConfig(
        model_type=model.config.model_type, hidden_size=int(model.config.hidden_size),
        reduction_factor=int(reduction_factor), non_linearity=non_linearity,
        base_model_name_or_path=base_model_name_or_path,
    )  # fmt: skip
    reference = next(model.parameters())
    for name, module in hook_points(model):
        _, parent = _parent(model, name)
        adapter = Bottleneck(config.hidden_size, config.bottleneck_size, non_linearity)
        adapter.to(device=reference.device, dtype=reference.dtype)
        parent.add_module(ATTRIBUTE, adapter)
        module.register_forward_hook(adapter.hook)
    model.bottleneck_config = config
    return config


def adapter_state_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    """The adapter weights of ``model``, named as in ``model.state_dict()``."""
    return {
        f"{prefix}.{key}": value
        for prefix, adapter in adapters(model).items()
        for key, value in adapter.state_dict().items()
    }


def save_bottleneck(model: nn.Module, folder: str | Path) -> Path:
    """Writes the adapter of ``model`` (config and weights only) into ``folder``.

    Raises:
        CdsbiasError: ``model`` has no adapters.
    """
    from safetensors.torch import save_file

    config = getattr(model, "bottleneck_config", None)
    if config is None or not adapters(model):
        raise CdsbiasError("The model has no bottleneck adapters to save.")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().cpu().contiguous() for k, v in adapter_state_dict(model).items()}
    save_file(tensors, str(folder / WEIGHTS_FILE), metadata={"format": "pt"})
    config.save(folder)
    return folder


def load_bottleneck(model: nn.Module, folder: str | Path) -> nn.Module:
    """Attaches the adapter saved in ``folder`` to ``model`` (its base) and returns ``model``.

    Raises:
        CdsbiasError: The folder is not an adapter folder, was made for another
            architecture or size, or its weights do not fit.
    """
    from safetensors.torch import load_file

    config = BottleneckConfig.load(folder)
    model_type = getattr(model.config, "model_type", None)
    hidden = getattr(model.config, "hidden_size", None)
    if (config.model_type, config.hidden_size) != (model_type, hidden):
        raise CdsbiasError(
            f"The adapter in {folder} was trained on a {config.model_type} model of hidden size "
            f"{config.hidden_size}, not on this {model_type} of hidden size {hidden}; load it "
            f"with its base model {config.base_model_name_or_path}."
        )
    weights = Path(folder) / WEIGHTS_FILE
    if not weights.is_file():
        raise CdsbiasError(f"{folder} has {CONFIG_FILE} but no {WEIGHTS_FILE}.")
    add_bottleneck_adapters(
        model, reduction_factor=config.reduction_factor, non_linearity=config.non_linearity,
        base_model_name_or_path=config.base_model_name_or_path,
    )  # fmt: skip
    state = load_file(str(weights))
    expected = adapter_state_dict(model)
    if set(state) != set(expected) or any(state[k].shape != v.shape for k, v in expected.items()):
        odd = sorted(set(state) ^ set(expected))[:3] or ["shapes differ"]
        raise CdsbiasError(
            f"The adapter weights in {weights} do not fit this model ({', '.join(odd)}); load "
            f"it with its base model {config.base_model_name_or_path}."
        )
    with torch.no_grad():
        for key, value in expected.items():
            value.copy_(state[key])
    return model
