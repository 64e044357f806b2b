"""Recipe configuration: one dataclass per concern, parsed from YAML with HfArgumentParser.

A recipe is a flat YAML mapping whose keys are the fields of :class:`ModelConfig`,
:class:`DataConfig`, :class:`CDSConfig`, :class:`BiasEvalConfig`, :class:`RunConfig`, the
debiasing methods' option dataclasses (:func:`cdsbias.methods.option_classes`) and
``transformers.TrainingArguments``.
``key=value`` overrides after the YAML path replace values (parsed as YAML scalars).
Unknown keys and values of the wrong type fail at load time, naming the key and the
closest valid one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdsbias.axes import DEFAULT_AXIS
from cdsbias.benchmarks import DEFAULT_BENCHMARKS, build_axis_benchmarks, normalize_specs
from cdsbias.benchmarks.axis_scope import warn_unmeasured_axes
from cdsbias.errors import CdsbiasError, did_you_mean
from cdsbias.io import read_yaml_mapping
from cdsbias.methods import MethodPlan, option_classes, plan_from_values
from cdsbias.options import check_value, parse_key_values
from cdsbias.train.axis_config import AxisConfig
from cdsbias.train.cds_config import CDSConfig
from cdsbias.train.recipe_validation import validate_recipe


@dataclass
class ModelConfig:
    """Which masked LM to fine-tune."""

    model_name_or_path: str | None = field(
        default="bert-base-uncased",
        metadata={"help": "Hub id or local folder of a *ForMaskedLM checkpoint."},
    )
    model_revision: str | None = field(
        default=None, metadata={"help": "Hub revision (branch, tag or commit) of the model."}
    )
    init_from_scratch: bool = field(
        default=False,
        metadata={
            "help": "Build a new random BERT (see model_config) with a WordPiece tokenizer "
            "trained on the training text instead of loading model_name_or_path. For smoke "
            "tests and offline demos; real runs fine-tune a pretrained model."
        },
    )
    model_config: dict[str, Any] = field(
        default_factory=dict,
        metadata={"help": "BertConfig overrides for init_from_scratch, e.g. {hidden_size: 64}."},
    )
    tokenizer_vocab_size: int = field(
        default=2000, metadata={"help": "WordPiece vocabulary size for init_from_scratch."}
    )


@dataclass
class DataConfig:
    """The training corpus: GAP documents, split, substituted, cut and tokenized."""

    dataset: str = field(
        default="gap",
        metadata={
            "help": "'gap' (Wikipedia snippets), 'occupations' (generated occupational "
            "sentences, for the offline demo), 'occupations+gap', a hub dataset id "
            "(e.g. Salesforce/wikitext), or a `datasets` builder for local files: 'text' "
            "(one document per line), 'json' (JSON lines), 'csv' or 'parquet' (with "
            "data_files)."
        },
    )
    dataset_config_name: str | None = field(
        default=None,
        metadata={"help": "Configuration of a hub dataset (e.g. wikitext-2-raw-v1)."},
    )
    dataset_split: str = field(
        default="train", metadata={"help": "Split of a hub dataset to train on."}
    )
    data_files: list[str] | None = field(
        default=None,
        metadata={
            "help": "Local files of dataset: text/json/csv/parquet: a path, a glob "
            "(corpus/*.jsonl) or a list; never written into a model card. With a hub "
            "dataset id: files of that repository (as load_dataset's data_files)."
        },
    )
    text_column: str = field(
        default="text",
        metadata={"help": "Column holding the documents (hub dataset or local files)."},
    )
    occupation_sentences: int = field(
        default=20_000, metadata={"help": "Sentences of the 'occupations' corpus."}
    )
    occupation_seed: int = field(
        default=1, metadata={"help": "Seed of the 'occupations' corpus (bootstrap uses 0)."}
    )
    occupation_language: str = field(
        default="en",
        metadata={
            "help": "Language of the 'occupations' corpus: en, de or da "
            "(cdsbias.data.occupations); cds_language must match it."
        },
    )
    data_dir: str | None = field(
        default=None,
        metadata={
            "help": "Folder laid out like shared/data (offline mirror); default: the "
            "`cdsbias data fetch` cache."
        },
    )
    splits: list[str] = field(
        default_factory=lambda: ["development", "test", "validation"],
        metadata={"help": "GAP files to train on (all of GAP by default, as in Bartl 2020)."},
    )
    max_documents: int | None = field(
        default=None,
        metadata={
            "help": "Use only the first N documents of the corpus (smoke tests); with "
            "occupations+gap, of GAP. dataset: occupations is sized by occupation_sentences."
        },
    )
    heldout_fraction: float = field(
        default=0.05,
        metadata={
            "help": "Fraction of documents kept out of training; their ORIGINAL text gives the "
            "held-out MLM loss at every checkpoint (what debiasing costs)."
        },
    )
    streaming: bool = field(
        default=False,
        metadata={
            "help": "Read the corpus lazily as a datasets.IterableDataset: CDS and tokenization "
            "run as batches are drawn (in dataloader_num_workers workers), nothing is held in "
            "memory. Needs max_steps. For corpora too large to prepare up front."
        },
    )
    heldout_documents: int | None = field(
        default=None,
        metadata={
            "help": "Streaming only: the first N documents of the stream are never trained "
            "on; their original text gives the held-out MLM loss (default 1000; 0: none). "
            "In memory, heldout_fraction chooses them instead."
        },
    )
    shuffle_buffer_size: int = field(
        default=0,
        metadata={
            "help": "Streaming only: shuffle the training stream through a buffer of N "
            "documents (and the order of its files), seeded by seed and the epoch; 0 keeps "
            "the stream's order. Larger mixes better and holds N documents in memory."
        },
    )
    text_unit: str = field(
        default="sentence",
        metadata={
            "help": "'sentence': one example per sentence (as in Bartl 2020), truncated to "
            "max_seq_length; 'chunk': documents tokenized, concatenated and cut into blocks "
            "of exactly max_seq_length tokens (run_mlm.py's group_texts), for large corpora."
        },
    )
    max_seq_length: int = field(
        default=128, metadata={"help": "Tokens per example; longer ones are truncated."}
    )
    mlm_probability: float = field(
        default=0.15, metadata={"help": "Share of tokens masked by the MLM collator."}
    )
    preprocessing_num_workers: int | None = field(
        default=None, metadata={"help": "Processes for datasets.map (None: in-process)."}
    )


@dataclass
class BiasEvalConfig:
    """Bias benchmarks scored at step 0 and at every checkpoint."""

    bias_benchmarks: dict[str, Any] = field(
        default_factory=lambda: {name: {} for name in DEFAULT_BENCHMARKS},
        metadata={
            "help": "Benchmarks to score: a list of names ([NAME, NAME]) or a mapping of "
            "names to options ({NAME: {OPTION: VALUE}, NAME: {}}); "
            "`cdsbias benchmarks NAME` lists a benchmark's options. Each mapping may also "
            "set language, data_file and data_dir."
        },
    )
    bias_eval_at_start: bool = field(
        default=True, metadata={"help": "Score the model before the first training step."}
    )
    bias_eval_batch_size: int = field(
        default=64, metadata={"help": "Scorer batch size. Larger is faster until memory ends."}
    )
    bias_data_dir: str | None = field(
        default=None, metadata={"help": "Benchmark data folder (like shared/data)."}
    )
    bias_language: str | None = field(
        default=None,
        metadata={
            "help": "Data language for every benchmark that has no language in its mapping; "
            "default: each benchmark's own (the first of its languages)."
        },
    )
    bias_n_resamples: int | None = field(
        default=2000,
        metadata={
            "help": "Bootstrap resamples for every benchmark that resamples (has an "
            "n_resamples option) unless its mapping sets one. Fewer is faster; 2000 is "
            "stable. null: each benchmark's own default."
        },
    )

    downstream_tasks: dict[str, Any] = field(
        default_factory=dict,
        metadata={
            "help": "Downstream tasks fine-tuned after training on the base model and the "
            "final model (not at checkpoints: each costs a fine-tuning per seed): a list of "
            "names or a mapping of names to task options ({NAME: {max_train_examples: 2000, "
            "data_dir: DIR}}); results in OUTPUT_DIR/downstream/<task>/, see "
            "docs/downstream.md."
        },
    )
    downstream_seeds: int = field(
        default=3, metadata={"help": "Fine-tuning seeds (0 .. N-1) of each downstream task."}
    )

    def build_benchmarks(self, axes: AxisConfig | None = None) -> list[Any]:
        """The configured benchmarks, options validated (their data is not read yet).

        Args:
            axes: The recipe's axis keys. Where they name an axis (``bias_axes``, or a
                ``bias_axis`` other than gender), a benchmark with a category or tests per
                axis is built once per measured axis (``NAME[race]``); a gender run
                without ``bias_axes`` scores as it always has.
        """
        measured = None
        if axes is not None and (axes.bias_axes is not None or axes.bias_axis != DEFAULT_AXIS):
            measured = axes.axes()
        benchmarks = [
            benchmark
            for name, spec in self.bias_benchmarks.items()
            for benchmark in build_axis_benchmarks(
                name, spec, measured, language=self.bias_language,
                data_dir=self.bias_data_dir, n_resamples=self.bias_n_resamples,
            )
        ]  # fmt: skip
        warn_unmeasured_axes(measured or [], benchmarks, listed=axes is not None and axes.bias_axes)
        return benchmarks


@dataclass
class RunConfig:
    """How this run treats its output folder and what publishing says."""

    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "Replace an output_dir that holds another run (never by default); the "
            "earlier run is deleted at the new run's first checkpoint, and kept if it fails "
            "before."
        },
    )
    license: str = field(
        default="apache-2.0", metadata={"help": "License written into the model card."}
    )


#: Keys whose value takes more than one form, brought to the field's type before checks.
def normalize_task_specs(value: Any) -> dict[str, dict[str, Any]]:
    """``[a, b]`` or ``{a: {option: value}}`` -> ``{name: {option: value}}`` (downstream tasks).

    Raises:
        CdsbiasError: Neither a list of names nor a mapping of names to option mappings.
    """
    if value is None:
        return {}
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return {name: {} for name in value}
    if isinstance(value, dict) and all(isinstance(v, dict | None) for v in value.values()):
        return {str(name): dict(options or {}) for name, options in value.items()}
    raise CdsbiasError(
        "downstream_tasks must be a list of task names or a mapping {name: {option: value}}, "
        f"got {value!r}."
    )


NORMALIZERS = {"bias_benchmarks": normalize_specs, "downstream_tasks": normalize_task_specs}

CONFIG_CLASSES = (ModelConfig, DataConfig, CDSConfig, BiasEvalConfig, RunConfig, AxisConfig)


@dataclass
class Recipe:
    """All parsed configuration of one run."""

    model: ModelConfig
    data: DataConfig
    cds: CDSConfig
    bias: BiasEvalConfig
    run: RunConfig
    training: Any  # transformers.TrainingArguments
    source: dict[str, Any]
    method: MethodPlan
    #: The parsed option dataclasses of every method (the recipe's method keys).
    method_options: tuple[Any, ...] = ()
    axis: AxisConfig = field(default_factory=AxisConfig)

    def effective(self) -> dict[str, Any]:
        """Every field of every section, as logged to trackers and written beside the run."""
        merged: dict[str, Any] = {}
        sections = (
            self.model, self.data, self.cds, self.bias, self.run, self.axis,
            *self.method_options,
        )  # fmt: skip
        for section in sections:
            merged.update(dataclasses.asdict(section))
        training = self.training.to_dict()
        merged.update({k: training[k] for k in sorted(training) if k in self.source})
        for key in ("output_dir", "seed", "learning_rate", "num_train_epochs", "max_steps",
                    "per_device_train_batch_size", "save_steps", "report_to"):  # fmt: skip
            merged[key] = training.get(key)
        return merged


def _training_arguments_class() -> type:
    from transformers import TrainingArguments

    return TrainingArguments


def _all_classes() -> tuple[type, ...]:
    return (*CONFIG_CLASSES, *option_classes(), _training_arguments_class())


def valid_keys() -> dict[str, dataclasses.Field]:
    """Every recipe key and the field that defines it."""
    keys: dict[str, dataclasses.Field] = {}
    for cls in _all_classes():
        for f in dataclasses.fields(cls):
            if f.init and not f.name.startswith("_"):
                keys.setdefault(f.name, f)
    return keys


def load_recipe(path: str | Path | None, overrides: list[str] | None = None) -> Recipe:
    """Reads a recipe YAML, applies ``key=value`` overrides and builds every config.

    Raises:
        CdsbiasError: Missing or unreadable file, unknown key (with the closest valid
            one), or a value of the wrong type.
    """
    from transformers import HfArgumentParser

    values: dict[str, Any] = {}
    if path is not None:
        values.update(read_yaml_mapping(path, "Recipe", empty_ok=True))
    command_line = parse_key_values(overrides or [], "Override")
    values.update(command_line)

    fields = valid_keys()
    hints: dict[str, Any] = {}
    for cls in _all_classes():
        # Unresolvable hints (forward references) fall back to no type check.
        with contextlib.suppress(Exception):
            hints.update({k: v for k, v in typing.get_type_hints(cls).items() if k not in hints})
    for key in list(values):
        if key not in fields:
            raise CdsbiasError(f"Unknown recipe key '{key}'. {did_you_mean(key, fields)}".strip())
        if key in NORMALIZERS:
            values[key] = NORMALIZERS[key](values[key])
        values[key] = check_value(key, values[key], hints.get(key, Any))
    if "output_dir" not in values:
        raise CdsbiasError("The recipe needs an output_dir.")

    parser = HfArgumentParser(_all_classes())
    try:
        parsed = parser.parse_dict(values, allow_extra_keys=False)
    except (ValueError, TypeError) as exc:
        raise CdsbiasError(f"Recipe error: {str(exc).splitlines()[0]}") from None
    model, data, cds, bias, run, axis, *method_options, training = parsed
    method_values = {k: v for o in method_options for k, v in dataclasses.asdict(o).items()}
    plan = plan_from_values(method_values, given=values, init_from_scratch=model.init_from_scratch)
    recipe = Recipe(
        model, data, cds, bias, run, training, values, plan, tuple(method_options), axis
    )
    validate_recipe(recipe, command_line)
    return recipe
