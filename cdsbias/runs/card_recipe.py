"""Which recipe keys shaped a trained model: the recipe block of its model card.

Paths and bookkeeping of this machine, the bias-evaluation settings (they measure the
model, they do not shape it), keys that do not apply to the run's corpus or method, and
the from-scratch keys of a fine-tuned model are left out.
"""

from __future__ import annotations

from typing import Any

from cdsbias.data.corpora import CORPUS_KEYS, corpus_kinds, is_local_dataset
from cdsbias.methods import plan_from_values

#: Keys that only shape a model built from scratch (``init_from_scratch: true``).
SCRATCH_KEYS = ("model_config", "tokenizer_vocab_size")

#: Keys that describe this machine or the run's bookkeeping, not the trained model.
LOCAL_KEYS = frozenset(
    {
        "output_dir",
        "data_dir",
        "data_files",
        "bias_data_dir",
        "logging_dir",
        "overwrite_output_dir",
        "resume_from_checkpoint",
        "report_to",
        "run_name",
        "hub_token",
        "hub_model_id",
        "push_to_hub",
        "save_total_limit",
        "logging_steps",
        "save_steps",
        "save_strategy",
        "dataloader_num_workers",
        "use_cpu",
        "preprocessing_num_workers",
        "license",
        "model_name_or_path",
        "model_revision",
    }
)


#: Training-argument keys that still shape a run that trains nothing (the post-hoc fit's seed).
UNTRAINED_KEEP = frozenset({"seed"})


def untrained_recipe(shown: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``shown`` that shaped a run that trained nothing (``posthoc_only``):
    without the corpus treatment (``cds_*``: the post-hoc step reads the text as it is) and
    the Trainer's arguments (learning rate, steps, batch size...), which never ran."""
    import dataclasses

    from transformers import TrainingArguments

    training = {f.name for f in dataclasses.fields(TrainingArguments)} - UNTRAINED_KEEP
    return {k: v for k, v in shown.items() if not k.startswith("cds_") and k not in training}


def card_recipe(effective: dict[str, Any]) -> dict[str, Any]:
    """The recipe keys that shaped the published model (for its card).

    Drops paths and bookkeeping of this machine, the bias-evaluation settings (they
    measure the model, they do not shape it) and the from-scratch keys of a model that
    was fine-tuned; the base model is named in the card's metadata instead. A run that
    trained nothing keeps only the keys that shaped it (:func:`untrained_recipe`).
    """
    kinds = corpus_kinds(str(effective.get("dataset", "gap")))
    unused = {key for key, shapes in CORPUS_KEYS.items() if not set(kinds) & set(shapes)}
    if kinds == ("occupations",):
        unused.add("max_documents")  # it cuts GAP and the other corpora only
    if kinds == ("hub",) and is_local_dataset(str(effective["dataset"])):
        unused.add("dataset")  # a local dataset folder: a path of this machine
    if effective.get("streaming"):
        unused.add("heldout_fraction")  # heldout_documents chooses the held-out text
    if (effective.get("max_steps") or 0) > 0:
        unused.add("num_train_epochs")  # max_steps decides the length of training
    # Keys of methods that did not act (e.g. adapter settings of a run without adapters).
    unused |= plan_from_values(effective).unused_keys()
    shown = {}
    for key, value in effective.items():
        if key in LOCAL_KEYS or key in unused or value is None:
            continue
        if key.startswith(("bias_", "n_", "downstream_")):  # evaluation, not the model
            continue
        if key in SCRATCH_KEYS and not effective.get("init_from_scratch"):
            continue
        shown[key] = value
    return untrained_recipe(shown) if effective.get("posthoc_only") else shown
