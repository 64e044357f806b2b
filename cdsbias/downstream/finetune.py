"""Fine-tuning a masked LM's encoder on a downstream task with ``transformers.Trainer``.

The classifier is the masked LM's encoder (``model.base_model``: any architecture
cdsbias loads, an attached method included) under a pooler-style head on the first token,
``logits = W₂ dropout(tanh(W₁ h_[CLS] + c₁)) + c₂`` (BERT's pooler and classifier;
RoBERTa's head). A post-hoc projection ``h ↦ P h + b`` of the model reaches the classifier
in one of two ways (:data:`VARIANTS`):

* ``fold``: folded into ``W₁`` before fine-tuning (``W₁ ← W₁P``, ``c₁ ← c₁ + W₁b``): the
  classifier starts exactly as the debiased model, and fine-tuning is free to undo it;
* ``hook``: kept as a frozen forward hook on the encoder during fine-tuning and testing, as
  bias-bench fine-tunes SentenceDebias and INLP models on GLUE (Meade et al. 2022), so the
  head never sees the erased direction.
"""

from __future__ import annotations

import copy
import inspect
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cdsbias.errors import CdsbiasError

#: How a model's post-hoc projection is carried into fine-tuning ("none": it has none).
VARIANTS = ("none", "fold", "hook")


@dataclass
class FinetuneConfig:
    """The fine-tuning recipe shared by every model and seed (``HfArgumentParser``-ready).

    ``None`` takes the task's default (bias-bench's GLUE settings: lr 2e-5, 3 epochs,
    batch 32, length 128).
    """

    learning_rate: float | None = field(default=None, metadata={"help": "peak learning rate"})
    epochs: float | None = field(default=None, metadata={"help": "training epochs"})
    batch_size: int | None = field(default=None, metadata={"help": "examples per step"})
    max_length: int | None = field(default=None, metadata={"help": "tokens per input, truncated"})
    max_steps: int = field(
        default=-1, metadata={"help": "stop after this many steps (-1: the epochs decide)"}
    )
    weight_decay: float = field(default=0.0, metadata={"help": "AdamW weight decay"})
    warmup_ratio: float = field(default=0.0, metadata={"help": "share of steps warming up"})
    dropout: float = field(default=0.1, metadata={"help": "dropout before the output layer"})

    def __post_init__(self) -> None:
        for name in ("learning_rate", "epochs", "batch_size", "max_length"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise CdsbiasError(f"{name} must be positive, got {value}.")
        if self.max_steps == 0 or self.max_steps < -1:
            raise CdsbiasError(f"max_steps must be -1 or positive, got {self.max_steps}.")
        if not 0 <= self.warmup_ratio < 1 or not 0 <= self.dropout < 1:
            raise CdsbiasError("warmup_ratio and dropout must be in [0, 1).")

    def resolved(self, task: Any) -> dict[str, Any]:
        """Every value, the task's defaults filled in (what the summary records)."""
        defaults = task.training
        return {
            "learning_rate": self.learning_rate or defaults.learning_rate,
            "epochs": self.epochs or defaults.epochs,
            "batch_size": self.batch_size or defaults.batch_size,
            "max_length": self.max_length or defaults.max_length,
            "max_steps": self.max_steps,
            "weight_decay": self.weight_decay,
            "warmup_ratio": self.warmup_ratio,
            "dropout": self.dropout,
        }


def hidden_size(encoder: Any) -> int:
    config = encoder.config
    return int(getattr(config, "hidden_size", 0) or getattr(config, "dim", 0))


def encoder_of(masked_lm: Any, shown: str) -> Any:
    """The masked LM's encoder (``base_model``), the module a head goes on.

    Raises:
        CdsbiasError: The model has no separate encoder or no hidden size.
    """
    from cdsbias.methods.head_fold import _unwrap

    inner = _unwrap(masked_lm)
    encoder = getattr(inner, "base_model", None)
    if encoder is None or encoder is inner or not hidden_size(encoder):
        raise CdsbiasError(
            f"{shown} ({type(inner).__name__}) has no encoder cdsbias can put a classification "
            "head on (no base_model with a hidden size); use a BERT-like masked LM."
        )
    return encoder


def build_classifier(encoder: Any, num_labels: int, dropout: float = 0.1) -> Any:
    """A ``torch.nn.Module`` classifier: ``encoder`` under the pooler-style head.

    ``num_labels == 1`` is regression (mean squared error), otherwise cross-entropy.
    The head's weights come from the torch RNG: seed it first.
    """
    import torch
    from transformers.modeling_outputs import SequenceClassifierOutput

    size = hidden_size(encoder)
    accepted = set(inspect.signature(encoder.forward).parameters)

    class Classifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.dense = torch.nn.Linear(size, size)
            self.dropout = torch.nn.Dropout(dropout)
            self.out_proj = torch.nn.Linear(size, num_labels)
            self.num_labels = num_labels

        def forward(
            self,
            input_ids: Any = None,
            attention_mask: Any = None,
            token_type_ids: Any = None,
            labels: Any = None,
        ) -> Any:
            inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None and "token_type_ids" in accepted:
                inputs["token_type_ids"] = token_type_ids
            hidden = self.encoder(**inputs)[0][:, 0]
            logits = self.out_proj(self.dropout(torch.tanh(self.dense(hidden))))
            loss = None
            if labels is not None:
                if self.num_labels == 1:
                    loss = torch.nn.functional.mse_loss(logits.squeeze(-1), labels.float())
                else:
                    loss = torch.nn.functional.cross_entropy(logits, labels.long())
            return SequenceClassifierOutput(loss=loss, logits=logits)

    return Classifier()


def fold_into_head(classifier: Any, erasure: Any) -> None:
    """``W₁ ← W₁P``, ``c₁ ← c₁ + W₁b`` (float64, stored in the layer's dtype), in place."""
    import torch

    layer = classifier.dense
    weight = layer.weight.detach().to(torch.float64).cpu().numpy()
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(weight @ erasure.projection).to(layer.weight.dtype))
        shift = torch.from_numpy(weight @ erasure.bias).to(layer.bias.device)
        layer.bias.copy_((layer.bias.detach().to(torch.float64) + shift).to(layer.bias.dtype))


def tokenized(frame: pd.DataFrame, task: Any, tokenizer: Any, max_length: int) -> Any:
    """A ``datasets.Dataset`` of token ids (unpadded) and ``labels``."""
    import datasets
    import datasets.utils.logging as datasets_logging

    columns = list(task.text_columns)
    dataset = datasets.Dataset.from_dict(
        {**{c: frame[c].astype(str).tolist() for c in columns},
         "labels": frame[task.label_column].tolist()}
    )  # fmt: skip

    def encode(batch: dict[str, list]) -> Any:
        texts = [batch[c] for c in columns]
        return tokenizer(*texts, truncation=True, max_length=max_length)

    shown = datasets_logging.is_progress_bar_enabled()
    datasets_logging.disable_progress_bar()
    try:
        return dataset.map(encode, batched=True, remove_columns=columns)
    finally:
        if shown:
            datasets_logging.enable_progress_bar()


@dataclass
class SeedResult:
    """One fine-tuning: the test predictions and its costs."""

    predictions: np.ndarray
    train_seconds: float
    train_examples_per_second: float
    steps: int
    model: Any = None


def finetune_and_predict(
    masked_lm: Any,
    tokenizer: Any,
    task: Any,
    splits: dict[str, pd.DataFrame],
    *,
    seed: int,
    config: FinetuneConfig,
    variant: str = "none",
    erasure: Any = None,
    shown: str = "model",
    keep_model: bool = False,
) -> SeedResult:
    """Fine-tunes a copy of ``masked_lm``'s encoder on ``splits["train"]`` with ``seed``
    and predicts ``splits["test"]`` (class ids, or scores for a regression task).

    Args:
        masked_lm: The loaded masked LM (left unchanged: its encoder is deep-copied).
        tokenizer: Its tokenizer.
        task: The :class:`~cdsbias.downstream.base.Task`, loaded.
        splits: ``{"train": frame, "test": frame}`` from ``task.load()``.
        seed: Seed of the head's initialisation, the data order and dropout.
        config: The fine-tuning recipe.
        variant: ``none``, ``fold`` or ``hook`` (see the module's docstring).
        erasure: The model's :class:`~cdsbias.methods.erasure.AffineErasure` (fold, hook).
        shown: The model's name in errors.
        keep_model: Return the fine-tuned classifier too (tests, inspection).
    """
    import torch
    from transformers import (
        DataCollatorWithPadding,
        PrinterCallback,
        Trainer,
        TrainingArguments,
        set_seed,
    )

    classifier = prepared_classifier(masked_lm, task, seed, config, variant, erasure, shown)
    values = config.resolved(task)
    train = tokenized(splits["train"], task, tokenizer, values["max_length"])
    test = tokenized(splits["test"], task, tokenizer, values["max_length"])
    with tempfile.TemporaryDirectory(prefix="cdsbias-downstream-") as scratch:
        args = TrainingArguments(
            output_dir=scratch,
            learning_rate=values["learning_rate"],
            num_train_epochs=values["epochs"],
            max_steps=values["max_steps"],
            per_device_train_batch_size=values["batch_size"],
            per_device_eval_batch_size=values["batch_size"],
            weight_decay=values["weight_decay"],
            warmup_steps=float(values["warmup_ratio"]),
            seed=seed,
            data_seed=seed,
            save_strategy="no",
            eval_strategy="no",
            logging_strategy="no",
            report_to=[],
            disable_tqdm=True,
            dataloader_pin_memory=torch.cuda.is_available(),
        )
        set_seed(seed)
        trainer = Trainer(
            model=classifier,
            args=args,
            train_dataset=train,
            data_collator=DataCollatorWithPadding(tokenizer),
        )
        trainer.remove_callback(PrinterCallback)  # the summary prints the results
        start = time.perf_counter()
        output = trainer.train()
        seconds = time.perf_counter() - start
        logits = trainer.predict(test).predictions
    logits = np.asarray(logits[0] if isinstance(logits, tuple) else logits)
    # float64 so that rows.tsv round-trips the scores exactly (float32 text does not).
    predictions = logits[:, 0].astype(np.float64) if task.regression else logits.argmax(-1)
    return SeedResult(
        predictions=predictions,
        train_seconds=seconds,
        train_examples_per_second=float(output.metrics.get("train_samples_per_second", 0.0)),
        steps=int(output.global_step),
        model=classifier if keep_model else None,
    )


def prepared_classifier(
    masked_lm: Any,
    task: Any,
    seed: int,
    config: FinetuneConfig,
    variant: str,
    erasure: Any,
    shown: str,
) -> Any:
    """The seeded classifier on a copy of the encoder, the projection folded or hooked."""
    from transformers import set_seed

    from cdsbias.methods.head_fold import hook

    if variant not in VARIANTS:
        raise CdsbiasError(f"variant must be one of {', '.join(VARIANTS)}, got '{variant}'.")
    if variant != "none" and erasure is None:
        raise CdsbiasError(f"the {variant} variant needs the model's post-hoc projection.")
    model = copy.deepcopy(masked_lm)
    encoder = encoder_of(model, shown)
    # What loading attached on top (a posthoc_apply: hook run's map) is the variant's job.
    encoder._forward_hooks.clear()
    set_seed(seed)
    classifier = build_classifier(encoder, max(task.num_labels, 1), config.dropout)
    if variant == "fold":
        fold_into_head(classifier, erasure)
    elif variant == "hook":
        hook(model, erasure)
    classifier.train()
    return classifier
