"""The benchmark interface and registry (lm-evaluation-harness style).

A benchmark is one module in ``cdsbias/benchmarks/`` holding a :class:`Benchmark`
subclass decorated with :func:`register`. Scoring is split from loading and summarising
so that the training callback can score the rows of one benchmark across processes
and summarise the gathered result.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cdsbias.errors import CdsbiasError, unknown_name_error
from cdsbias.io import atomic_output_dir

if TYPE_CHECKING:
    import pandas as pd

    from cdsbias.scoring import MaskedLMScorer

REGISTRY: dict[str, type[Benchmark]] = {}


@dataclass
class BenchmarkResult:
    """What a benchmark run produces.

    Attributes:
        name: The benchmark's registry name.
        rows: The input rows, in input order, with the score columns added.
        summary: JSON-serialisable nested results (group means, CIs, tests, ...).
        metrics: Flat ``{name: float}`` scalars for trackers (W&B, TensorBoard).
        report: Human-readable table printed by the CLI.
    """

    name: str
    rows: pd.DataFrame
    summary: dict[str, Any]
    metrics: dict[str, float] = field(default_factory=dict)
    report: str = ""


class Benchmark(ABC):
    """Base class of every benchmark.

    Subclasses set ``name``, ``description`` and ``languages`` and implement
    :meth:`load`, :meth:`score` and :meth:`summarize`. Options come as keyword arguments
    from the CLI (``--data``, ``--data-dir``, ``--language``, ...) or the training recipe.

    Args:
        data_file: An explicit data file to load instead of the default.
        data_dir: A folder laid out like ``shared/data`` to find the default files in.
        language: Language code of the data set to use; default: the benchmark's first.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    languages: ClassVar[tuple[str, ...]] = ("en",)
    #: Rows sharing this column's value go to the same process when scoring is sharded
    #: (rows that share sentences should be scored together). None: contiguous blocks.
    shard_column: ClassVar[str | None] = None
    #: Name of the :mod:`cdsbias.fetch` dataset holding the default data files, if any.
    dataset: ClassVar[str | None] = None

    def __init__(
        self,
        *,
        data_file: str | Path | None = None,
        data_dir: str | Path | None = None,
        language: str | None = None,
    ) -> None:
        language = language or self.languages[0]
        if language not in self.languages:
            raise CdsbiasError(
                f"Benchmark '{self.name}' has no '{language}' data; "
                f"languages: {', '.join(self.languages)}."
            )
        self.data_file = Path(data_file) if data_file else None
        self.data_dir = Path(data_dir) if data_dir else None
        self.language = language

    def default_file(self, filename: str) -> Path:
        """Path of ``filename`` of :attr:`dataset`, in ``data_dir`` or the fetch cache.

        Raises:
            CdsbiasError: The file is not there yet (the message says how to fetch it).
        """
        from cdsbias.fetch import resolve

        if self.dataset is None:
            raise CdsbiasError(f"Benchmark '{self.name}' has no default data; pass --data FILE.")
        return resolve(self.dataset, filename, self.data_dir)

    @abstractmethod
    def load(self) -> pd.DataFrame:
        """Reads (or generates) the benchmark rows, validating their format."""

    @abstractmethod
    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        """Returns ``rows`` with score columns added; each row is scored independently."""

    @abstractmethod
    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        """Returns ``(summary, metrics)`` for the scored rows."""

    def format_report(self, summary: dict[str, Any]) -> str:
        """A readable table of ``summary``; benchmarks override this."""
        return json.dumps(summary, indent=2, default=_json_default)

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

    def curve(self, summary: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
        """Headline values for training curves: ``{label: (value, ci_low, ci_high)}``."""
        return {}

    def run(self, scorer: MaskedLMScorer) -> BenchmarkResult:
        """Loads, scores and summarises in one call."""
        scored = self.score(scorer, self.load())
        summary, metrics = self.summarize(scored)
        return BenchmarkResult(self.name, scored, summary, metrics, self.format_report(summary))


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Class decorator adding a benchmark to :data:`REGISTRY` under ``cls.name``."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"Benchmark name '{cls.name}' is registered twice.")
    REGISTRY[cls.name] = cls
    return cls


def get_benchmark(name: str) -> type[Benchmark]:
    """Looks a benchmark up by name; a miss says what was meant and what exists."""
    from cdsbias.benchmarks import load_all

    load_all()
    if name not in REGISTRY:
        raise unknown_name_error("benchmark", name, REGISTRY)
    return REGISTRY[name]


def list_benchmarks() -> dict[str, str]:
    """``{name: description}`` of every registered benchmark."""
    from cdsbias.benchmarks import load_all

    load_all()
    return {name: REGISTRY[name].description for name in sorted(REGISTRY)}


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _clean_floats(value: Any) -> Any:
    """Turns NaN/inf into None so summary.json stays valid JSON."""
    if isinstance(value, dict):
        return {str(k): _clean_floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_floats(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json(summary: dict[str, Any]) -> str:
    """Serialises a summary as strict JSON (NaN becomes null)."""
    return json.dumps(_clean_floats(summary), indent=2, default=_json_default) + "\n"


def write_result(result: BenchmarkResult, out_dir: str | Path) -> Path:
    """Writes ``OUT/<name>/rows.tsv`` and ``summary.json`` atomically; returns the folder."""
    final = Path(out_dir) / result.name
    with atomic_output_dir(final) as staging:
        result.rows.to_csv(staging / "rows.tsv", sep="\t", index=False, lineterminator="\n")
        (staging / "summary.json").write_text(to_json(result.summary), encoding="utf-8")
    return final
