"""LoRA (Hu et al. 2022) with ``peft``: low-rank updates of chosen linear layers; the base
model stays frozen and the Trainer saves (and on resume restores) the adapter only.

A saved folder holds peft's ``adapter_config.json`` (naming the base) and
``adapter_model.safetensors``. For scoring, the base is loaded with the LoRA layers in
place, not merged, so scores equal the training run's bit for bit; ``cdsbias publish``
uploads the adapter alone, or with ``--merge`` folded into full weights
(``merge_and_unload``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import Method, register

#: LoRA targets when ``lora_target_modules`` is not set: the attention query and value
#: projections, as in Hu et al. 2022 (ModernBERT fuses q, k and v into one ``Wqkv``).
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


@dataclass
class LoraOptions:
    """LoRA settings (peft ``LoraConfig``)."""

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

    def __post_init__(self) -> None:
        for key in ("lora_r", "lora_alpha"):
            if getattr(self, key) < 1:
                raise CdsbiasError(f"{key} must be at least 1, got {getattr(self, key)}.")
        if not 0.0 <= self.lora_dropout < 1.0:
            raise CdsbiasError(f"lora_dropout must be in [0, 1), got {self.lora_dropout}.")


@contextmanager
def _quiet_peft() -> Iterator[None]:
    """peft asks a transformers 5 API it deprecated; that warning is not the user's."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
        yield


@register
class Lora(Method):
    name = "lora"
    role = "weights"
    title = "LoRA"
    description = "low-rank adapters (LoRA) on chosen linear layers trained; the base stayed frozen"
    Options = LoraOptions
    selected_by = "peft_method: lora"
    example: ClassVar[dict[str, Any]] = {"peft_method": "lora", "lora_r": 4}
    citation = (
        "Hu, E. J., Shen, Y., Wallis, P., Allen-Zhu, Z., Li, Y., Wang, S., Wang, L., & Chen, W. "
        "(2022). LoRA: Low-Rank Adaptation of Large Language Models. ICLR 2022."
    )
    card_tags = ("peft", "lora")
    card_library = "peft"
    card_merged = (
        "the adapter was then merged into the base weights (`merge_and_unload`), so this "
        "repository holds full weights that load without peft."
    )
    card_origin = "A [LoRA](https://arxiv.org/abs/2106.09685) adapter"
    publishes = "adapter"
    mergeable = True
    resumes_from_weights = False

    @classmethod
    def files(cls) -> tuple[str, ...]:
        from peft.utils import CONFIG_NAME, SAFETENSORS_WEIGHTS_NAME

        return (CONFIG_NAME, SAFETENSORS_WEIGHTS_NAME)

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        return values.get("peft_method") == "lora"

    def check(self, *, init_from_scratch: bool) -> None:
        if init_from_scratch:
            raise CdsbiasError(
                "peft_method: lora adapts a saved pretrained model, which its checkpoints name "
                "as their base; init_from_scratch builds a random one that is never saved. Set "
                "init_from_scratch=false and model_name_or_path, or peft_method=none."
            )

    def targets(self, model: Any) -> list[str]:
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
        targets = self.options.lora_target_modules or DEFAULT_LORA_TARGETS.get(model_type)
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
                    f"lora_target_modules: '{target}' names no layer of this {model_type} "
                    f"model; choose from its linear layers: {', '.join(linear)}."
                )
        return list(targets)

    def prepare(self, model: Any, tokenizer: Any = None) -> Any:
        from peft import LoraConfig, get_peft_model

        options = self.options
        config = LoraConfig(
            r=options.lora_r, lora_alpha=options.lora_alpha, lora_dropout=options.lora_dropout,
            target_modules=self.targets(model),
        )  # fmt: skip
        # peft names the base after the model's own name_or_path, so adapter folders load
        # from any working directory when that is an absolute path.
        model.name_or_path = absolute_origin(model)
        with _quiet_peft():
            return get_peft_model(model, config)

    def scoring_model(self, model: Any) -> Any:
        # The peft wrapper's inner model carries the LoRA layers; the scorer hooks its
        # encoder to project only the rows it reads.
        return model.get_base_model() if hasattr(model, "get_base_model") else model

    def label(self, model: Any = None) -> str:
        peft_config = getattr(model, "peft_config", {}).get("default") if model else None
        targets = sorted(peft_config.target_modules) if peft_config is not None else None
        return f"LoRA r={self.options.lora_r}" + (f" ({', '.join(targets)})" if targets else "")

    def card_text(self) -> str:
        targets = self.options.lora_target_modules
        where = (
            f"`{', '.join(targets)}`" if targets else "the attention query and value projections"
        )
        return (
            f"[LoRA](https://arxiv.org/abs/2106.09685) adapters of rank {self.options.lora_r} "
            f"(alpha {self.options.lora_alpha}) on {where} were trained; the base weights "
            "stayed frozen"
        )

    # ------------------------------------------------------------------ saved folders
    @classmethod
    def attach(cls, model: Any, folder: Path) -> Any:
        from peft import PeftModel

        try:
            with _quiet_peft():
                return PeftModel.from_pretrained(model, str(folder)).get_base_model()
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise CdsbiasError(
                f"Cannot apply the LoRA adapter in '{folder}': {first_line(exc)}"
            ) from None

    @classmethod
    def merge(cls, model: Any, folder: Path) -> Any:
        from peft import PeftModel

        try:
            with _quiet_peft():
                adapted = PeftModel.from_pretrained(model, str(folder))
                return adapted.merge_and_unload(safe_merge=True)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise CdsbiasError(
                f"Cannot merge the LoRA adapter in {folder}: {first_line(exc)}"
            ) from None

    @classmethod
    def usage(cls, repo_id: str, base: str | None, tokenizer_from: str | None) -> list[str]:
        return [
            "The adapter loads onto its base model with "
            "[peft](https://huggingface.co/docs/peft) (`model.merge_and_unload()` then folds "
            "it into the base weights):",
            "",
            "```python",
            "from peft import PeftModel",
            "from transformers import AutoModelForMaskedLM, AutoTokenizer",
            "",
            f'base = AutoModelForMaskedLM.from_pretrained("{base}")',
            f'model = PeftModel.from_pretrained(base, "{repo_id}").eval()',
            f'tokenizer = AutoTokenizer.from_pretrained("{tokenizer_from}")',
            "```",
        ]


def absolute_origin(model: Any) -> str | None:
    """The model's origin, absolute when it is a local folder (adapters name their base)."""
    name = getattr(model, "name_or_path", None) or None
    if name and Path(name).exists():
        return str(Path(name).resolve())
    return name


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
