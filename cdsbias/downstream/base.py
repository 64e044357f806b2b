"""The downstream-task interface and registry.

A task owns everything about itself: where its data lives (a hub dataset or local files),
which columns it reads and checks, its training defaults, its metrics with unit and
direction, its citation. The fine-tuning (:mod:`cdsbias.downstream.finetune`) and the
output folder (:mod:`cdsbias.downstream.runner`) never name a task.
"""

from __future__ import annotations

import dataclasses
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from cdsbias.benchmarks.results import Metric
from cdsbias.downstream.data import load_hub_splits, load_local_splits, require_columns
from cdsbias.downstream.metrics import Interval, bootstrap_over_examples
from cdsbias.errors import CdsbiasError, shown
from cdsbias.options import build_dataclass

REGISTRY: dict[str, type[Task]] = {}


@dataclass
class TaskOptions:
    """Options every task takes (``--option key=value``; a recipe's task mapping)."""

    max_train_examples: int | None = field(
        default=None,
        metadata={"help": "train on at most this many examples (a seeded sample, the same "
                  "for every model and seed), for CPU budgets", "min": 1},
    )  # fmt: skip
    max_test_examples: int | None = field(
        default=None,
        metadata={"help": "score at most this many test examples (a seeded sample)", "min": 1},
    )
    n_resamples: int = field(
        default=1000,
        metadata={"help": "bootstrap resamples of the test examples (0: no interval)", "min": 0},
    )

    def __post_init__(self) -> None:
        for name in ("max_train_examples", "max_test_examples"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise CdsbiasError(f"{name} must be at least 1, got {value}.")


@dataclass(frozen=True)
class TrainingDefaults:
    """A task's fine-tuning recipe (bias-bench's GLUE settings unless the task says)."""

    learning_rate: float = 2e-5
    epochs: float = 3.0
    batch_size: int = 32
    max_length: int = 128


class Task(ABC):
    """Base class of every downstream task.

    Subclasses set the class attributes and implement :meth:`statistics`; a task that
    measures bias also sets :attr:`group_columns` and may override :meth:`notes`.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    citation: ClassVar[str]
    #: ``(path, config)`` for :func:`datasets.load_dataset`.
    hub_dataset: ClassVar[tuple[str, str | None]]
    #: ``{"train": hub split, "test": hub split}`` (GLUE scores its validation split).
    hub_splits: ClassVar[dict[str, str]]
    #: One column (single sentence) or two (a sentence pair).
    text_columns: ClassVar[tuple[str, ...]]
    label_column: ClassVar[str] = "label"
    #: Columns a bias metric groups by (kept in ``rows.tsv``).
    group_columns: ClassVar[tuple[str, ...]] = ()
    regression: ClassVar[bool] = False
    #: A regression task's scale (lowest, highest label); None: not bounded.
    label_range: ClassVar[tuple[float, float] | None] = None
    headline: ClassVar[tuple[Metric, ...]]
    training: ClassVar[TrainingDefaults] = TrainingDefaults()
    Options: ClassVar[type] = TaskOptions

    def __init__(
        self,
        options: Mapping[str, Any] | None = None,
        data_dir: Path | None = None,
        *,
        data_option: str = "--data",
    ):
        self.options = build_dataclass(self.Options, dict(options or {}), f"{self.name} option")
        self.data_dir = Path(data_dir) if data_dir is not None else None
        #: Where the user named ``data_dir`` (a flag or a recipe key), for its errors.
        self.data_option = data_option
        self.num_labels = 1 if self.regression else 0
        self.facts: dict[str, Any] = {}

    # ------------------------------------------------------------------ data
    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.text_columns, self.label_column, *self.group_columns)

    def load(self) -> dict[str, pd.DataFrame]:
        """``{"train": ..., "test": ...}``: checked, sampled and prepared (:meth:`prepare`).

        Raises:
            CdsbiasError: A missing file or column (the error lists the file's columns),
                an empty split, a label outside the task's classes.
        """
        if self.data_dir is not None:
            splits = load_local_splits(self.data_dir, ("train", "test"), self.data_option)
        else:
            splits = load_hub_splits(*self.hub_dataset, self.hub_splits, self.name)
        out = {}
        for split, (where, frame) in splits.items():
            require_columns(frame, self.columns, where, self.name, self.data_option)
            frame = frame[list(self.columns)].reset_index(drop=True)
            self.check_label_range(frame, where)  # before sampling: rows as in the file
            limit = getattr(self.options, f"max_{split}_examples", None)
            if limit is not None and len(frame) > limit:
                frame = frame.sample(n=limit, random_state=0).sort_index().reset_index(drop=True)
            self.check_frame(frame, where)
            out[split] = self.prepare(frame)
        if not self.regression:
            self.num_labels = int(max(out["train"][self.label_column].max(),
                                      out["test"][self.label_column].max())) + 1  # fmt: skip
        self.facts.update(
            data=str(self.data_dir)
            if self.data_dir
            else f"hub:{self.hub_dataset[0]}"
            + (f"/{self.hub_dataset[1]}" if self.hub_dataset[1] else ""),
            n_train=len(out["train"]),
            n_test=len(out["test"]),
        )
        return out

    def check_frame(self, frame: pd.DataFrame, where: str) -> None:
        """Refuses an empty split and labels the task cannot train on."""
        if frame.empty:
            raise CdsbiasError(f"{where} holds no examples; {self.name} needs some.")
        labels = frame[self.label_column]
        if frame[list(self.columns)].isna().any().any():
            bad = [c for c in self.columns if frame[c].isna().any()]
            raise CdsbiasError(f"{where}: empty values in column(s) {', '.join(bad)}.")
        if self.regression and not pd.api.types.is_numeric_dtype(labels):
            raise CdsbiasError(
                f"{where}: column '{self.label_column}' must hold numbers, got "
                f"{shown(labels.iloc[0])!r}."
            )
        if not self.regression and (not pd.api.types.is_integer_dtype(labels) or labels.min() < 0):
            raise CdsbiasError(
                f"{where}: column '{self.label_column}' must hold class ids 0, 1, ... "
                "(hidden test labels are -1: score a split with labels), "
                f"got {shown(labels.min())!r}."
            )

    def check_label_range(self, frame: pd.DataFrame, where: str) -> None:
        """Refuses a regression label outside :attr:`label_range`, naming its row (1 = the
        file's first example)."""
        labels = frame[self.label_column]
        if self.label_range is None or not pd.api.types.is_numeric_dtype(labels):
            return
        low, high = self.label_range
        outside = labels[(labels < low) | (labels > high)]
        if not outside.empty:
            raise CdsbiasError(
                f"{where}: row {int(outside.index[0]) + 1} has {self.label_column} "
                f"{float(outside.iloc[0]):g}, outside {self.name}'s scale {low:g} to {high:g} "
                f"({len(outside)} such row{'s' if len(outside) > 1 else ''}); fix or drop them."
            )

    def prepare(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The frame the model reads (e.g. scrubbed text); default unchanged."""
        return frame

    # --------------------------------------------------------------- metrics
    @abstractmethod
    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        """``{metric key: value}`` on ``rows`` (label, prediction and group columns)."""

    def notes(self, rows: pd.DataFrame) -> list[str]:
        """Facts about ``rows`` a reader must know (e.g. groups left out); warned once."""
        return []

    def summarize(self, rows: pd.DataFrame, *, seed: int = 0) -> dict[str, Any]:
        """Pooled metrics with bootstrap intervals, plus each seed's values and notes."""
        notes = self.notes(rows)
        for note in notes:
            warnings.warn(f"{self.name}: {note}", stacklevel=2)
        pooled: dict[str, Interval] = bootstrap_over_examples(
            rows, self.statistics, n_resamples=self.options.n_resamples, seed=seed
        )
        per_seed = {int(s): self.statistics(group) for s, group in rows.groupby("seed", sort=True)}
        return {
            "metrics": {key: value.as_dict() for key, value in pooled.items()},
            "per_seed": per_seed,
            "notes": notes,
        }

    def option_values(self) -> dict[str, Any]:
        return dataclasses.asdict(self.options)


def register(cls: type[Task]) -> type[Task]:
    """Class decorator adding a task to :data:`REGISTRY` under ``cls.name``."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"Downstream task name '{cls.name}' is registered twice.")
    REGISTRY[cls.name] = cls
    return cls
