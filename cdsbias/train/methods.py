"""What a run trains: all weights, some of them, a LoRA or a bottleneck adapter; and dropout.

* **Partial fine-tuning** (``trainable_parameters``): glob patterns over parameter names;
  everything else is frozen. A tensor shared under several names (BERT's decoder weight
  *is* the word-embedding matrix) trains when any of its names matches and no ``!``
  pattern matches any of them: ``cls.*`` thus also trains the word embeddings unless
  ``!cls.predictions.decoder.weight`` keeps them frozen. Checkpoints hold full weights.
* **LoRA** (``peft_method: lora``) with ``peft``: the Trainer saves the adapter only
  (``adapter_config.json``, ``adapter_model.safetensors``) and restores it on resume.
* **Bottleneck adapters** (``peft_method: adapter``, ADELE; :mod:`cdsbias.bottleneck`):
  the Trainer saves the full model it resumes from; a callback
  (:mod:`cdsbias.train.method_callbacks`) adds the adapter alone
  (``bottleneck_config.json``, ``bottleneck_adapter.safetensors``) to every checkpoint and
  to the output folder.
* **Dropout debiasing** (Webster et al. 2020): ``hidden_dropout_prob`` and
  ``attention_probs_dropout_prob`` override the model's dropout when it is loaded for
  training, under each architecture's own names (:func:`dropout_overrides`).
"""

from __future__ import annotations

import difflib
import fnmatch
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cdsbias.errors import CdsbiasError

#: LoRA targets when ``lora_target_modules`` is not set: the attention query and value
#: projections, as in Hu et al. 2021 (ModernBERT fuses q, k and v into one ``Wqkv``).
DEFAULT_LORA_TARGETS: dict[str, list[str]] = {
    "bert": ["query", "value"],
    "roberta": ["query", "value"],
    "xlm-roberta": ["query", "value"],
    "camembert": ["query", "value"],
    "electra": ["query", "value"],
    "albert": ["query", "value"],
    "distilbert": ["q_lin", "v_lin"],
    "deberta-v2": ["query_proj", "value_proj"],
    "modernbert": ["Wqkv"],
}
#: The config names of BERT's hidden and attention dropout in other families. ModernBERT's
#: attention_dropout also covers the attention output projection.
DROPOUT_NAMES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "distilbert": (("dropout",), ("attention_dropout",)),
    "modernbert": (("embedding_dropout", "mlp_dropout"), ("attention_dropout",)),
}
_BERT_DROPOUT = (("hidden_dropout_prob",), ("attention_probs_dropout_prob",))
_LORA_KEYS = ("lora_r", "lora_alpha", "lora_dropout", "lora_target_modules")
_ADAPTER_KEYS = ("adapter_reduction_factor", "adapter_non_linearity")


@dataclass
class MethodConfig:
    """Which parameters are trained, and the dropout they are trained with."""

    trainable_parameters: list[str] | None = field(
        default=None,
        metadata={
            "help": "Partial fine-tuning: glob patterns over parameter names that train, e.g. "
            "[bert.encoder.layer.11.*, cls.*]; everything else is frozen. A leading ! "
            "excludes. Tied tensors train if any of their names matches: cls.* also trains "
            "BERT's word embeddings unless !cls.predictions.decoder.weight is added."
        },
    )
    peft_method: Literal["none", "lora", "adapter"] = field(
        default="none",
        metadata={
            "help": "'none' (fine-tune the weights), 'lora' (peft LoRA on lora_target_modules) "
            "or 'adapter' (Pfeiffer bottleneck adapters after each feed-forward block, base "
            "frozen, as ADELE)."
        },
    )
    lora_r: int = field(default=8, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(
        default=16, metadata={"help": "LoRA scaling numerator (scale = alpha / r)."}
    )
    lora_dropout: float = field(default=0.1, metadata={"help": "Dropout on the LoRA input."})
    lora_target_modules: list[str] | None = field(
        default=None,
        metadata={
            "help": "Module names LoRA adapts (name suffixes, e.g. [query, value]); default: "
            "the attention query and value projections of the architecture."
        },
    )
    adapter_reduction_factor: int = field(
        default=16,
        metadata={"help": "Hidden size / adapter bottleneck size (16 in ADELE)."},
    )
    adapter_non_linearity: Literal["relu", "gelu", "tanh", "silu"] = field(
        default="relu", metadata={"help": "Non-linearity inside the adapter bottleneck."}
    )
    hidden_dropout_prob: float | None = field(
        default=None,
        metadata={
            "help": "Dropout on hidden states while training (Webster et al. 2020: 0.20); "
            "null keeps the model's. DistilBERT: dropout; ModernBERT: embedding and MLP dropout."
        },
    )
    attention_probs_dropout_prob: float | None = field(
        default=None,
        metadata={
            "help": "Dropout on attention probabilities while training (Webster et al. 2020: "
            "0.15); null keeps the model's. DistilBERT and ModernBERT: attention_dropout."
        },
    )

    def __post_init__(self) -> None:
        if self.peft_method not in ("none", "lora", "adapter"):
            raise CdsbiasError(
                f"peft_method must be none, lora or adapter, got '{self.peft_method}'."
            )
        if self.trainable_parameters is not None:
            if not self.trainable_parameters or not all(
                isinstance(p, str) and p.strip("! ") for p in self.trainable_parameters
            ):
                raise CdsbiasError("trainable_parameters needs non-empty glob patterns.")
            torn = [p for p in self.trainable_parameters if p.startswith("[") or p.endswith("]")]
            if torn:  # YAML reads an unquoted !name as a tag, and the list as plain text
                raise CdsbiasError(
                    f"trainable_parameters: {torn[0]!r} is part of a list YAML could not read; "
                    "quote patterns that start with !, e.g. '[cls.*, \"!cls.predictions.*\"]'."
                )
            if self.peft_method != "none":
                raise CdsbiasError(
                    f"trainable_parameters chooses the weights full fine-tuning trains; with "
                    f"peft_method: {self.peft_method} only the adapter trains. Remove one of them."
                )
        for key in ("lora_r", "lora_alpha", "adapter_reduction_factor"):
            if getattr(self, key) < 1:
                raise CdsbiasError(f"{key} must be at least 1, got {getattr(self, key)}.")
        for key in ("lora_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, key)
            if value is not None and not 0.0 <= value < 1.0:
                raise CdsbiasError(f"{key} must be in [0, 1), got {value}.")

    @property
    def dropout(self) -> dict[str, float | None] | None:
        """The dropout keys, or None when neither is set."""
        if self.hidden_dropout_prob is None and self.attention_probs_dropout_prob is None:
            return None
        return {
            "hidden_dropout_prob": self.hidden_dropout_prob,
            "attention_probs_dropout_prob": self.attention_probs_dropout_prob,
        }


def check_method_keys(
    method: MethodConfig, source: dict[str, Any], init_from_scratch: bool
) -> None:
    """Recipe keys that do not fit the chosen method (a key is never dropped silently).

    Raises:
        CdsbiasError: LoRA keys without ``peft_method: lora``, adapter keys without
            ``peft_method: adapter``, or an adapter on a model built from scratch.
    """
    for keys, needs in ((_LORA_KEYS, "lora"), (_ADAPTER_KEYS, "adapter")):
        given = [k for k in keys if k in source and source[k] is not None]
        if given and method.peft_method != needs:
            raise CdsbiasError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to "
                f"peft_method: {needs} (this recipe has "
                f"peft_method: {method.peft_method}); remove {'it' if len(given) == 1 else 'them'} "
                f"or set peft_method={needs}."
            )
    if init_from_scratch and method.peft_method != "none":
        raise CdsbiasError(
            f"peft_method: {method.peft_method} adapts a saved pretrained model, which its "
            "checkpoints name as their base; init_from_scratch builds a random one that is "
            "never saved. Set init_from_scratch=false and model_name_or_path, or peft_method=none."
        )


def unused_method_keys(effective: dict[str, Any]) -> set[str]:
    """Method keys that did not shape a run (left out of its model card)."""
    method = effective.get("peft_method", "none")
    unused = set()
    if method != "lora":
        unused.update(_LORA_KEYS)
    if method != "adapter":
        unused.update(_ADAPTER_KEYS)
    return unused


def dropout_overrides(model_type: str, cfg: MethodConfig) -> dict[str, float]:
    """Config keyword arguments that set ``cfg``'s dropout on a ``model_type`` model.

    Every family not in :data:`DROPOUT_NAMES` uses BERT's names; a loader that finds one
    of them missing from the model's config reports it (see ``load_masked_lm``).
    """
    hidden_names, attention_names = DROPOUT_NAMES.get(model_type, _BERT_DROPOUT)
    overrides: dict[str, float] = {}
    if cfg.hidden_dropout_prob is not None:
        overrides.update(dict.fromkeys(hidden_names, cfg.hidden_dropout_prob))
    if cfg.attention_probs_dropout_prob is not None:
        overrides.update(dict.fromkeys(attention_names, cfg.attention_probs_dropout_prob))
    return overrides


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
            close = difflib.get_close_matches(pattern.rstrip(".*"), every_name, n=3, cutoff=0.5)
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


def _base_name(model: Any) -> str | None:
    """The model's origin, absolute when it is a local folder (adapters name their base)."""
    name = getattr(model, "name_or_path", None) or None
    if name and Path(name).exists():
        return str(Path(name).resolve())
    return name


def lora_targets(model: Any, cfg: MethodConfig) -> list[str]:
    """The modules LoRA adapts: ``lora_target_modules`` or the architecture's default.

    Raises:
        CdsbiasError: No default for the architecture, or a target that matches no
            module (both listing the linear layers to choose from).
    """
    from torch import nn

    model_type = model.config.model_type
    linear = sorted(
        {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    )
    targets = cfg.lora_target_modules or DEFAULT_LORA_TARGETS.get(model_type)
    if not targets:
        raise CdsbiasError(
            f"lora_target_modules has no default for model_type '{model_type}'; set it to "
            f"some of its linear layers: {', '.join(linear)}."
        )
    # Layers LoRA can adapt: modules with their own weight and no sub-modules.
    layers = [
        n
        for n, m in model.named_modules()
        if not list(m.children()) and isinstance(getattr(m, "weight", None), nn.Parameter)
    ]
    for target in targets:
        if not any(n == target or n.endswith("." + target) for n in layers):
            raise CdsbiasError(
                f"lora_target_modules: '{target}' names no layer of this {model_type} model; "
                f"choose from its linear layers: {', '.join(linear)}."
            )
    return list(targets)


def apply_method(model: Any, cfg: MethodConfig) -> tuple[Any, dict[str, Any]]:
    """Prepares a loaded model for training with ``cfg``'s method.

    Args:
        model: A ``*ForMaskedLM`` (loaded with :func:`dropout_overrides` already applied).
        cfg: The method.

    Returns:
        The model to train (a ``peft.PeftModel`` for LoRA, else ``model`` itself) and its
        :func:`method_summary`.

    Raises:
        CdsbiasError: Bad patterns or targets, or an architecture the method does not know.
    """
    if cfg.peft_method == "lora":
        from peft import LoraConfig, get_peft_model

        config = LoraConfig(
            r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
            target_modules=lora_targets(model, cfg),
        )  # fmt: skip
        # peft names the base after the model's own name_or_path, so adapter folders load
        # from any working directory when that is an absolute path.
        model.name_or_path = _base_name(model)
        with warnings.catch_warnings():  # peft asks a transformers 5 API it deprecated
            warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
            model = get_peft_model(model, config)
    elif cfg.peft_method == "adapter":
        from cdsbias.bottleneck import adapters, add_bottleneck_adapters

        add_bottleneck_adapters(
            model, reduction_factor=cfg.adapter_reduction_factor,
            non_linearity=cfg.adapter_non_linearity, base_model_name_or_path=_base_name(model),
        )  # fmt: skip
        model.requires_grad_(False)
        for adapter in adapters(model).values():
            adapter.requires_grad_(True)
    elif cfg.trainable_parameters:
        freeze_except(model, cfg.trainable_parameters)
    return model, method_summary(model, cfg)


def method_label(cfg: MethodConfig, targets: list[str] | None = None) -> str:
    """A short description: ``LoRA r=8 (query, value) + dropout 0.20/0.15``."""
    if cfg.peft_method == "lora":
        label = f"LoRA r={cfg.lora_r}" + (f" ({', '.join(targets)})" if targets else "")
    elif cfg.peft_method == "adapter":
        label = f"bottleneck adapter (reduction {cfg.adapter_reduction_factor})"
    elif cfg.trainable_parameters:
        label = f"partial fine-tuning ({', '.join(cfg.trainable_parameters)})"
    else:
        label = "full fine-tuning"
    if cfg.dropout is not None:
        shown = [f"{v:.2f}" if v is not None else "default" for v in cfg.dropout.values()]
        label += f" + dropout {'/'.join(shown)}"
    return label


def method_summary(model: Any, cfg: MethodConfig) -> dict[str, Any]:
    """What ``run_info.json["method"]`` records: method, label and parameter counts.

    ``total_parameters`` counts every tensor of the model to train once (adapters
    included, tied weights once); ``trainable_parameters`` those that require gradients.
    """
    params = list(model.parameters())  # shared tensors are listed once
    total = sum(p.numel() for p in params)
    trainable = sum(p.numel() for p in params if p.requires_grad)
    targets = None
    if cfg.peft_method == "lora":
        peft_config = getattr(model, "peft_config", {}).get("default")
        targets = sorted(peft_config.target_modules) if peft_config is not None else None
    return {
        "peft_method": cfg.peft_method,
        "label": method_label(cfg, targets),
        "trainable_parameters": trainable,
        "total_parameters": total,
        "trainable_share": trainable / total if total else 0.0,
        "dropout": cfg.dropout,
    }


def summary_line(summary: dict[str, Any]) -> str:
    """``trainable parameters: N of M (x.xx%)`` and the method's label."""
    return (
        f"trainable parameters: {summary['trainable_parameters']:,} of "
        f"{summary['total_parameters']:,} ({100 * summary['trainable_share']:.2f}%) "
        f"- {summary['label']}"
    )
