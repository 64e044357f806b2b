"""The benchmark interface and registry (lm-evaluation-harness style).

A benchmark is one module in ``cdsbias/benchmarks/`` holding a :class:`Benchmark`
subclass decorated with :func:`register`. It owns everything about itself: its data, its
typed options (:attr:`Benchmark.Options`), scoring, statistics, headline metrics (with
unit and direction), its training curve, what trackers get (W&B tables), its model-card
section and its hub ``EvalResult`` entries. Everything outside ``cdsbias/benchmarks/``
(CLI, training callback, publisher, report) goes through this interface only, and
:meth:`Benchmark.evaluate` is the one path from a scorer to a :class:`BenchmarkResult`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cdsbias.benchmarks import scorings
from cdsbias.benchmarks.axis_scope import axis_key, scope_options, split_key
from cdsbias.benchmarks.long_rows import score_naming_long_rows
from cdsbias.benchmarks.published import PublishedValue, published_notes
from cdsbias.benchmarks.results import (
    BenchmarkResult,
    Metric,
    Snapshot,
    UndefinedStatisticWarning,
    _is_numpy_noise,
    _json_default,
    hub_eval_results,
    metrics_table,
)
from cdsbias.errors import CdsbiasError, unknown_name_error
from cdsbias.options import build_dataclass

if TYPE_CHECKING:
    import pandas as pd
    from huggingface_hub import EvalResult

    from cdsbias.axes import BiasAxis
    from cdsbias.scoring import MaskedLMScorer

REGISTRY: dict[str, type[Benchmark]] = {}

#: Keys of a recipe's per-benchmark mapping that are not benchmark options.
COMMON_KEYS = ("language", "data_file", "data_dir")


@dataclass
class NoOptions:
    """A benchmark without options."""


class Benchmark(ABC):
    """Base class of every benchmark.

    Subclasses set ``name``, ``description``, ``languages`` (first = default), their
    :attr:`Options` dataclass and :attr:`headline`, and implement :meth:`load`,
    :meth:`score` and :meth:`summarize`; everything else has a default they may refine.

    Args:
        data_file: An explicit data file to load instead of the default.
        data_dir: A folder laid out like ``shared/data`` to find the default files in.
        language: Language code of the data set; default: the benchmark's first.
        **options: Fields of :attr:`Options`, validated once here.

    Raises:
        CdsbiasError: A language the benchmark has no data for, an unknown option or a
            value of the wrong type (the message names the option and what it takes).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    languages: ClassVar[tuple[str, ...]] = ("en",)
    #: The options dataclass: fields with ``metadata={"help": ...}``, ``Literal`` choices,
    #: defaults, and cross-field checks in ``__post_init__`` raising CdsbiasError.
    Options: ClassVar[type] = NoOptions
    #: Headline metrics (:meth:`headline_metrics` may make them depend on the options).
    headline: ClassVar[tuple[Metric, ...]] = ()
    #: Title and y-axis label of the benchmark's panel in the training curve.
    curve_title: ClassVar[str] = ""
    curve_ylabel: ClassVar[str] = ""
    #: ``(hub dataset id, display name)`` for the model card's ``model-index``.
    hub_dataset: ClassVar[tuple[str, str]] = ("", "")
    #: The paper, for model cards.
    citation: ClassVar[str] = ""
    #: Why a headline statistic can be undefined (said when one is, e.g. on a 1-row file).
    undefined_reason: ClassVar[str] = "too few rows in the groups the statistic compares"
    #: Rows sharing this column's value go to the same process when scoring is sharded
    #: (rows that share sentences should be scored together). None: contiguous blocks.
    shard_column: ClassVar[str | None] = None
    #: Name of the :mod:`cdsbias.data.fetch` dataset holding the default data files, if any.
    dataset: ClassVar[str | None] = None
    #: Values papers published for hub models (:mod:`cdsbias.benchmarks.published`).
    published: ClassVar[tuple[PublishedValue, ...]] = ()
    #: Values of the ``scoring`` option that read no masked position, with what they read
    #: instead; Self-Debias refuses them (:func:`cdsbias.benchmarks.scorings.unmasked_conflict`).
    unmasked_scorings: ClassVar[Mapping[str, str]] = {}
    #: The options that choose which bias axis the benchmark measures (CrowS-Pairs' and
    #: StereoSet's ``bias_type``, SEAT's ``tests``); empty for a benchmark with no notion
    #: of axis, which measures gender (BEC-Pro, WinoBias, Kurita, ...).
    axis_option_names: ClassVar[tuple[str, ...]] = ()
    #: What :meth:`intervals` computes, in words ("Wilson score interval over pairs").
    interval_name: ClassVar[str] = ""

    def __init__(
        self,
        *,
        data_file: str | Path | None = None,
        data_dir: str | Path | None = None,
        language: str | None = None,
        axis: str | BiasAxis | None = None,
        **options: Any,
    ) -> None:
        language = language or self.languages[0]
        if language not in self.languages:
            # Deferred: importing cdsbias.cds takes about a second (its word lists).
            from cdsbias.cds.languages import alias_hint

            hint = alias_hint(language, self.languages)
            raise CdsbiasError(
                f"Benchmark '{self.name}' has no '{language}' data; it supports "
                f"{', '.join(self.languages)} (the default is {self.languages[0]})."
                + (f" {hint}" if hint else "")
            )
        self.data_file = Path(data_file) if data_file else None
        self.data_dir = Path(data_dir) if data_dir else None
        self.language = language
        #: The bias axis the benchmark is scoped to (its name), or None: unscoped.
        self.axis: str | None = None
        if axis is not None and self.axis_option_names:
            options, self.axis = self._scope_to_axis(axis, options)
        self.options = self.parse_options(options)
        self._rows: pd.DataFrame | None = None

    # ------------------------------------------------------------------ axes
    @classmethod
    def axis_options(cls, axis: BiasAxis) -> dict[str, Any]:
        """The option values that scope this benchmark to ``axis`` (its category or tests).

        Raises:
            CdsbiasError: The axis has nothing this benchmark can score (a user's attribute
                file names no category): the message names the option to set instead.
        """
        raise CdsbiasError(f"Benchmark '{cls.name}' has no notion of bias axis.")

    def _scope_to_axis(
        self, axis: str | BiasAxis, options: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None]:
        """:func:`cdsbias.benchmarks.axis_scope.scope_options` (a benchmark whose data can
        fix its scope refines it)."""
        return scope_options(self, axis, options)

    @property
    def key(self) -> str:
        """The name results go under: ``name``, or ``name[axis]`` when scoped to an axis
        (``crows_pairs[race]``), so that one run can score a benchmark on several axes."""
        return axis_key(self.name, self.axis)

    def intervals(self, summary: dict[str, Any]) -> dict[str, tuple[float, float]]:
        """95% intervals of headline metrics, ``{metric key: (low, high)}``, for the
        cross-axis matrix (:mod:`cdsbias.runs.axes_matrix`); none by default."""
        return {}

    # --------------------------------------------------------------- options
    @classmethod
    def parse_options(cls, values: Mapping[str, Any]) -> Any:
        """Typed, validated :attr:`Options` from ``{name: value}`` (strings are parsed)."""
        return build_dataclass(cls.Options, values, f"{cls.name} option")

    def option_values(self) -> dict[str, Any]:
        """The options as a plain mapping (``cls(**b.option_values())`` rebuilds ``b``)."""
        return dataclasses.asdict(self.options)

    def headline_metrics(self) -> tuple[Metric, ...]:
        """The metrics a reader looks at first; by default :attr:`headline` (per scoring
        where the options name several, :mod:`cdsbias.benchmarks.scorings`)."""
        if scorings.several(self):
            return scorings.headline_metrics(self)
        return self.headline

    # ------------------------------------------------------------------ data
    def default_file(self, filename: str) -> Path:
        """Path of ``filename`` of :attr:`dataset`, in ``data_dir`` or the fetch cache.

        Raises:
            CdsbiasError: The file is not there yet (the message says how to fetch it).
        """
        from cdsbias.data.fetch import resolve

        if self.dataset is None:
            raise CdsbiasError(f"Benchmark '{self.name}' has no default data; pass --data FILE.")
        return resolve(self.dataset, filename, self.data_dir)

    @property
    def rows(self) -> pd.DataFrame:
        """The benchmark's rows, loaded (and validated) once."""
        if self._rows is None:
            self._rows = self.load()
        return self._rows

    @abstractmethod
    def load(self) -> pd.DataFrame:
        """Reads (or generates) the benchmark rows, validating their format."""

    # --------------------------------------------------------------- scoring
    @abstractmethod
    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        """Returns ``rows`` with score columns added; each row is scored independently."""

    @abstractmethod
    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        """Returns ``(summary, metrics)`` for the scored rows."""

    def shard(self, rows: pd.DataFrame, rank: int, world_size: int) -> list[int]:
        """Positions of the rows that process ``rank`` of ``world_size`` scores.

        Every row goes to exactly one process; groups of ``shard_column`` stay together and
        are dealt round-robin in order of first appearance.
        """
        if world_size <= 1:
            return list(range(len(rows)))
        if self.shard_column is None:
            bounds = [len(rows) * r // world_size for r in range(world_size + 1)]
            return list(range(bounds[rank], bounds[rank + 1]))
        values = rows[self.shard_column].tolist()
        owner = {v: i % world_size for i, v in enumerate(dict.fromkeys(values))}
        return [i for i, v in enumerate(values) if owner[v] == rank]

    def evaluate(
        self,
        scorer: MaskedLMScorer,
        *,
        rank: int = 0,
        world_size: int = 1,
        gather: Callable[[Any], list[Any]] | None = None,
        annotate: Mapping[str, Any] | None = None,
    ) -> BenchmarkResult | None:
        """Loads, scores (this process's shard), gathers, summarises: the one path.

        Args:
            scorer: The scorer of the model under test.
            rank: This process's rank when scoring is sharded over processes.
            world_size: The number of processes.
            gather: Collects one object from every rank (``all_gather_object``); needed
                when ``world_size > 1``.
            annotate: Extra entries for the summary (``model``, ``step``, ...).

        Returns:
            The result on rank 0; ``None`` on the other ranks.
        """
        import pandas as pd

        self_debias = getattr(scorer, "self_debias", None)
        conflict = self.self_debias_conflict() if self_debias is not None else None
        if conflict:
            raise CdsbiasError(f"Self-Debias cannot score {self.name}: {conflict}.")
        rows = self.rows
        if world_size > 1:
            if gather is None:
                raise ValueError("evaluate() over several processes needs a gather function")
            scored = score_naming_long_rows(self, scorer, self.shard(rows, rank, world_size))
            parts = gather(scored)
            if rank != 0:
                return None
            scored = pd.concat(parts).sort_index()
        else:
            scored = score_naming_long_rows(self, scorer, list(range(len(rows))))
        summary, metrics = self._summarize_quietly(scored)
        read = self.representation(scorer)
        if read is not None:  # which hidden states: the encoder's own, or through a map
            summary["representation"] = read
        summary.update(annotate or {})
        if self_debias is not None:
            # A debiased score must never pass for a plain one: both files say so.
            summary["self_debias"] = self_debias.settings()
            scored = scored.assign(self_debias=self_debias.label())
        report = self.format_report(summary)
        tables = self.result_tables(scored)
        return BenchmarkResult(self.key, scored, summary, metrics, report, tables)

    def representation(self, scorer: MaskedLMScorer) -> str | None:
        """For a benchmark that reads hidden states (sentence encodings), which ones, in
        words (:func:`cdsbias.scoring.embeddings.encoded_representation`: ``"encoder"``, or
        ``"encoder through the SentenceDebias map (fold)"``); None for one that reads masked
        predictions only. The summary records it as ``representation``."""
        return None

    def check_scorer(self, scorer: MaskedLMScorer) -> None:
        """Refuses options this model cannot take (e.g. a hidden layer it lacks), before
        anything is scored or written (:func:`check_scorer_options`); by default, none."""
        return None

    def self_debias_conflict(self) -> str | None:
        """Why Self-Debias cannot score this benchmark with the options chosen (it reads
        unmasked positions, or runs the model outside the scorer), or None; by default, a
        chosen scoring among :attr:`unmasked_scorings`."""
        return scorings.unmasked_conflict(self)

    def _summarize_quietly(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        """:meth:`summarize`, saying once which headline statistic is undefined and why.

        On too few rows (a one-line ``--data`` file, a group with no rows) numpy's own
        warnings ("Mean of empty slice", "invalid value encountered in scalar divide")
        name no statistic; they are replaced by one :class:`UndefinedStatisticWarning`.
        The benchmark's own warnings pass through, and when one of them already explains
        an undefined value no second warning is added.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            summary, metrics = self.summarize(scored)
        own = [w for w in caught if not _is_numpy_noise(w)]
        for w in own:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        undefined = [
            m.label
            for m in self.headline_metrics()
            if m.key not in metrics or not math.isfinite(float(metrics[m.key]))
        ]
        if undefined and not own:
            warnings.warn(
                f"{self.name}: {'; '.join(undefined)} undefined on these {len(scored)} row(s): "
                f"{self.undefined_reason}.",
                UndefinedStatisticWarning,
                stacklevel=3,
            )
        return summary, metrics

    # --------------------------------------------------------------- outputs
    def format_report(self, summary: dict[str, Any]) -> str:
        """A readable table of ``summary``; benchmarks override this."""
        return json.dumps(summary, indent=2, default=_json_default)

    def curve(self, summary: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
        """Curves with CIs for the training plot: ``{label: (value, ci_low, ci_high)}``.

        Empty by default: :meth:`curve_points` then plots the headline metrics.
        """
        return {}

    def curve_points(
        self, summary: dict[str, Any], metrics: Mapping[str, float]
    ) -> dict[str, tuple[float, float | None, float | None]]:
        """What the training curve plots: :meth:`curve`, else the headline metrics."""
        points = self.curve(summary)
        if points:
            return points
        return {
            m.label: (float(metrics[m.key]), None, None)
            for m in self.headline_metrics()
            if m.key in metrics
        }

    def published_notes(self, model_id: str | None, metrics: Mapping[str, float]) -> list[str]:
        """``published: X (source; protocol)`` lines for the measured ``metrics`` of hub
        model ``model_id``, naming what differs from the paper's protocol (see
        :func:`cdsbias.benchmarks.published.published_notes`); none for other models."""
        if scorings.several(self):
            return scorings.published_notes(self, model_id, metrics)
        return published_notes(
            self.published, model_id, metrics, self.option_values(),
            own_data=self.data_file is not None,
        )  # fmt: skip

    def result_tables(self, scored: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """Tables written beside ``rows.tsv`` as ``<name>.tsv`` for the scored rows (one row
        per test where the benchmark runs many, not per input row); none by default."""
        return {}

    def tracker_tables(self, result: BenchmarkResult) -> dict[str, tuple[list[str], list[list]]]:
        """Tables for trackers (W&B): ``{name: (columns, rows)}``; none by default."""
        return {}

    def card_section(self, before: Snapshot | None, after: Snapshot) -> str:
        """The model card's markdown for this benchmark, before vs after training.

        The default is a table of the headline metrics with their change
        (:func:`~cdsbias.benchmarks.results.metrics_table`); benchmarks add what a reader
        needs to trust the numbers (CIs, tests, a verdict).
        """
        return metrics_table(self.headline_metrics(), before, after)

    def eval_results(self, snapshot: Snapshot, *, when: str) -> list[EvalResult]:
        """Hub ``EvalResult`` entries (``model-index``) for the headline metrics at a step
        (:func:`~cdsbias.benchmarks.results.hub_eval_results`; one hub entry per axis).

        Args:
            snapshot: The step's metrics.
            when: ``"before"`` or ``"after"`` training; with the step it goes into the
                metric's name and ``args`` so both survive on the hub and round-trip.
        """
        dataset_id, dataset_name = self.hub_dataset
        return hub_eval_results(
            self.headline_metrics(),
            snapshot,
            when=when,
            task_name=f"{self.axis or 'gender'} bias",
            dataset_type=dataset_id or self.name,
            dataset_name=dataset_name or self.name,
            # The hub groups results by task and dataset config: one entry per axis.
            dataset_config=self.language if self.axis is None else f"{self.language}-{self.axis}",
        )


def check_scorer_options(benchmarks: list[Benchmark], scorer: MaskedLMScorer) -> None:
    """Every benchmark's :meth:`Benchmark.check_scorer`, before any of them is scored, so
    that an option one benchmark cannot use fails before another writes its result.

    Raises:
        CdsbiasError: ``"<benchmark>: <why>"`` for the first benchmark that refuses.
    """
    for benchmark in benchmarks:
        try:
            benchmark.check_scorer(scorer)
        except CdsbiasError as exc:
            raise CdsbiasError(f"{benchmark.name}: {exc}") from None


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Class decorator adding a benchmark to :data:`REGISTRY` under ``cls.name``."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"Benchmark name '{cls.name}' is registered twice.")
    REGISTRY[cls.name] = cls
    return cls


def get_benchmark(name: str) -> type[Benchmark]:
    """Looks a benchmark up by name (or result key, ``name[axis]``); a miss says what was
    meant and what exists."""
    from cdsbias.benchmarks import load_all

    load_all()
    name = split_key(name)[0]
    if name not in REGISTRY:
        raise unknown_name_error("benchmark", name, REGISTRY)
    return REGISTRY[name]


def list_benchmarks() -> dict[str, str]:
    """``{name: description}`` of every registered benchmark."""
    from cdsbias.benchmarks import load_all

    load_all()
    return {name: REGISTRY[name].description for name in sorted(REGISTRY)}
