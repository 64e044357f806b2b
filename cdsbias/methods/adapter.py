"""Bottleneck adapters (ADELE; Lauscher, Lüken & Glavaš 2021): a small bottleneck network
after each feed-forward block (Pfeiffer placement, :mod:`cdsbias.methods.bottleneck`), the
base frozen. Its up-projection starts at zero, so training starts from the base model's
exact scores.

The Trainer saves (and on resume restores) the full model; a callback adds the adapter
alone (``bottleneck_config.json``, ``bottleneck_adapter.safetensors``) to every checkpoint
and to the output folder: that is what ``cdsbias evaluate`` loads and ``cdsbias publish``
uploads (the full weights would load with a plain ``from_pretrained`` *without* the
adapter). It adds layers the base architecture lacks, so it cannot be merged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import Method, register
from cdsbias.methods.lora import absolute_origin


@dataclass
class AdapterOptions:
    """Bottleneck adapter settings."""

    adapter_reduction_factor: int = field(
        default=16,
        metadata={"help": "Hidden size / adapter bottleneck size (16 in ADELE)."},
    )
    adapter_non_linearity: Literal["relu", "gelu", "tanh", "silu"] = field(
        default="relu", metadata={"help": "Non-linearity inside the adapter bottleneck."}
    )

    def __post_init__(self) -> None:
        if self.adapter_reduction_factor < 1:
            raise CdsbiasError(
                f"adapter_reduction_factor must be at least 1, got {self.adapter_reduction_factor}."
            )


@register
class BottleneckAdapter(Method):
    name = "adapter"
    role = "weights"
    title = "bottleneck adapter"
    description = (
        "bottleneck adapters after each feed-forward block trained; the base stayed frozen"
    )
    Options = AdapterOptions
    selected_by = "peft_method: adapter"
    example: ClassVar[dict[str, Any]] = {"peft_method": "adapter", "adapter_reduction_factor": 4}
    citation = (
        "Lauscher, A., Lüken, T., & Glavaš, G. (2021). Sustainable Modular Debiasing of "
        "Language Models. Findings of EMNLP 2021."
    )
    card_tags = ("adapter", "bottleneck-adapter")
    card_origin = "A bottleneck adapter (Pfeiffer et al. 2021, as in ADELE)"
    publishes = "adapter"
    resumes_from_weights = False

    @classmethod
    def files(cls) -> tuple[str, ...]:
        return ("bottleneck_config.json", "bottleneck_adapter.safetensors")

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        return values.get("peft_method") == "adapter"

    def check(self, *, init_from_scratch: bool) -> None:
        if init_from_scratch:
            raise CdsbiasError(
                "peft_method: adapter adapts a saved pretrained model, which its checkpoints "
                "name as their base; init_from_scratch builds a random one that is never saved. "
                "Set init_from_scratch=false and model_name_or_path, or peft_method=none."
            )

    def prepare(self, model: Any, tokenizer: Any = None) -> Any:
        from cdsbias.methods.bottleneck import adapters, add_bottleneck_adapters

        add_bottleneck_adapters(
            model, reduction_factor=self.options.adapter_reduction_factor,
            non_linearity=self.options.adapter_non_linearity,
            base_model_name_or_path=absolute_origin(model),
        )  # fmt: skip
        model.requires_grad_(False)
        for adapter in adapters(model).values():
            adapter.requires_grad_(True)
        return model

    def save(self, model: Any, folder: Path) -> None:
        from cdsbias.methods.bottleneck import save_bottleneck

        save_bottleneck(model, folder)

    def label(self, model: Any = None) -> str:
        return f"bottleneck adapter (reduction {self.options.adapter_reduction_factor})"

    def card_text(self) -> str:
        return (
            "bottleneck adapters (Pfeiffer et al. 2021, as in ADELE) with reduction factor "
            f"{self.options.adapter_reduction_factor} and {self.options.adapter_non_linearity} "
            "after each feed-forward block were trained; the base weights stayed frozen"
        )

    # ------------------------------------------------------------------ saved folders
    @classmethod
    def saved_base(cls, folder: Path) -> str | None:
        # A training checkpoint holds the full weights it resumes from beside the adapter;
        # the adapter alone (copied or published) names its base.
        if (Path(folder) / "config.json").is_file():
            return str(folder)
        return cls.recorded_base(folder)

    @classmethod
    def attach(cls, model: Any, folder: Path) -> Any:
        from cdsbias.methods.bottleneck import load_bottleneck

        return load_bottleneck(model, folder)

    @classmethod
    def usage(cls, repo_id: str, base: str | None, tokenizer_from: str | None) -> list[str]:
        tokenizer_arg = "folder" if tokenizer_from == repo_id else "config.base_model_name_or_path"
        return [
            "The adapter's layers are defined by cdsbias (`pip install cdsbias`); "
            "`transformers` alone would load the base model without them. "
            "`cdsbias evaluate FOLDER` scores the downloaded folder.",
            "",
            "```python",
            "from huggingface_hub import snapshot_download",
            "from transformers import AutoModelForMaskedLM, AutoTokenizer",
            "",
            "from cdsbias.methods.bottleneck import BottleneckConfig, load_bottleneck",
            "",
            f'folder = snapshot_download("{repo_id}")',
            "config = BottleneckConfig.load(folder)",
            "base = AutoModelForMaskedLM.from_pretrained(config.base_model_name_or_path)",
            "model = load_bottleneck(base, folder).eval()",
            f"tokenizer = AutoTokenizer.from_pretrained({tokenizer_arg})",
            "```",
        ]
