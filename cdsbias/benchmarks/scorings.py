"""Several scorings in one run (``scoring: [aul, aula]``), and which scorings read no mask.

A benchmark whose ``scoring`` option may name a list computes every requested score in its
:meth:`~cdsbias.benchmarks.base.Benchmark.score` from the passes they share (AUL and AULA
from one unmasked pass, :func:`cdsbias.scoring.unmasked.unmasked_score_sets`; every scoring
from the same tokenized rows) and joins each scoring's per-row columns as
``<scoring>/<column>`` (:func:`join_rows`). Everything after scoring is the benchmark's own
single-scoring code, run once per scoring on a copy of it with that one scoring
(:func:`single`), so each scoring's numbers are exactly those of its own run:

* summary: ``{"benchmark", "scoring": [...], "by_scoring": {scoring: its run's summary}}``;
* metrics and headline metrics: ``<scoring>/<key>``, labels ending in ``[<scoring>]``;
* curve labels, report sections and published-value lines: one set per scoring, named.

A single name, or a one-item list, is the single-scoring run, unchanged. The benchmark
hands these steps over where :func:`several` is true.

Self-Debias decays masked predictions only: a benchmark lists in
:attr:`~cdsbias.benchmarks.base.Benchmark.unmasked_scorings` the scorings that read none,
and :func:`unmasked_conflict` refuses them, alone or in a list.
"""

from __future__ import annotations

import copy
import dataclasses
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from cdsbias.errors import CdsbiasError

if TYPE_CHECKING:
    import pandas as pd

    from cdsbias.benchmarks.results import Metric


class Benchmark(Protocol):
    """What this module reads of a benchmark (:class:`cdsbias.benchmarks.base.Benchmark`).

    A protocol rather than an import: base.py builds its several-scorings behaviour on
    this module, so importing base back would make a circle.
    """

    name: str
    options: Any
    unmasked_scorings: ClassVar[Mapping[str, str]]

    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]: ...

    def headline_metrics(self) -> tuple[Metric, ...]: ...

    def curve(
        self, summary: dict[str, Any]
    ) -> dict[str, tuple[float, float | None, float | None]]: ...

    def format_report(self, summary: dict[str, Any]) -> str: ...

    def published_notes(self, model_id: str | None, metrics: Mapping[str, float]) -> list[str]: ...


#: One benchmark's type, kept through :func:`single`.
BenchmarkT = TypeVar("BenchmarkT", bound=Benchmark)


def chosen(scoring: str | Sequence[str] | None) -> list[str]:
    """The scorings an option value names, in order (none for a benchmark without one)."""
    if scoring is None:
        return []
    return [scoring] if isinstance(scoring, str) else list(scoring)


def one_or_several(scoring: str | Sequence[str], benchmark: str) -> str | list[str]:
    """The ``scoring`` option as stored: a name, or a list of two or more distinct names.

    Raises:
        CdsbiasError: A name given twice.
    """
    if isinstance(scoring, str):
        return scoring
    names = list(scoring)
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise CdsbiasError(
            f"{benchmark} option 'scoring' names {', '.join(twice)} more than once; "
            "give each scoring once."
        )
    return names[0] if len(names) == 1 else names


def several(benchmark: Benchmark) -> bool:
    """Whether ``benchmark``'s options name more than one scoring."""
    return len(chosen(getattr(benchmark.options, "scoring", None))) > 1


def single(benchmark: BenchmarkT, scoring: str) -> BenchmarkT:
    """A copy of ``benchmark`` with the one ``scoring`` (it shares the loaded rows)."""
    one = copy.copy(benchmark)
    one.options = dataclasses.replace(benchmark.options, scoring=scoring)
    return one


def join_rows(rows: pd.DataFrame, parts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """``rows`` with the columns each scoring's frame added, as ``<scoring>/<column>``.

    A single-scoring frame's ``scoring`` column is left out: the prefix says it.
    """
    import pandas as pd

    added = {
        f"{scoring}/{column}": part[column].to_numpy()
        for scoring, part in parts.items()
        for column in part.columns
        if column not in rows.columns and column != "scoring"
    }
    return pd.concat([rows, pd.DataFrame(added, index=rows.index)], axis=1)


def rows_of(scored: pd.DataFrame, scoring: str, scorings: Sequence[str]) -> pd.DataFrame:
    """The rows as ``scoring``'s own run has them: the shared columns and its own, unprefixed."""
    prefixes = tuple(f"{name}/" for name in scorings)
    shared = [c for c in scored.columns if not str(c).startswith(prefixes)]
    own = {
        c: str(c)[len(scoring) + 1 :] for c in scored.columns if str(c).startswith(f"{scoring}/")
    }
    return scored[shared].join(scored[list(own)].rename(columns=own))


def summarize(
    benchmark: Benchmark, scored: pd.DataFrame
) -> tuple[dict[str, Any], dict[str, float]]:
    """Each scoring's own summary and metrics (see the module docstring for the keys)."""
    names = chosen(benchmark.options.scoring)
    summary: dict[str, Any] = {"benchmark": benchmark.name, "scoring": names, "by_scoring": {}}
    metrics: dict[str, float] = {}
    for scoring in names:
        part, values = single(benchmark, scoring).summarize(rows_of(scored, scoring, names))
        summary["by_scoring"][scoring] = part
        metrics.update({f"{scoring}/{key}": value for key, value in values.items()})
    return summary, metrics


def headline_metrics(benchmark: Benchmark) -> tuple[Metric, ...]:
    """Each scoring's headline metrics, keyed ``<scoring>/<key>`` and labelled with it."""
    return tuple(
        dataclasses.replace(
            metric, key=f"{scoring}/{metric.key}", label=f"{metric.label} [{scoring}]"
        )
        for scoring in chosen(benchmark.options.scoring)
        for metric in single(benchmark, scoring).headline_metrics()
    )


def curve(
    benchmark: Benchmark, summary: dict[str, Any]
) -> dict[str, tuple[float, float | None, float | None]]:
    """Each scoring's curves, labelled with it."""
    return {
        f"{label} [{scoring}]": point
        for scoring, part in summary["by_scoring"].items()
        for label, point in single(benchmark, scoring).curve(part).items()
    }


def format_report(benchmark: Benchmark, summary: dict[str, Any]) -> str:
    """Each scoring's report, one after the other."""
    return "\n\n".join(
        single(benchmark, scoring).format_report(part)
        for scoring, part in summary["by_scoring"].items()
    )


def published_notes(
    benchmark: Benchmark, model_id: str | None, metrics: Mapping[str, float]
) -> list[str]:
    """Each scoring's published-value lines, against its own metrics, named by its key."""
    lines = []
    for scoring in chosen(benchmark.options.scoring):
        prefix = f"{scoring}/"
        own = {k[len(prefix) :]: v for k, v in metrics.items() if k.startswith(prefix)}
        notes = single(benchmark, scoring).published_notes(model_id, own)
        lines += [prefix + line for line in notes]
    return lines


def choices(benchmark: Benchmark) -> list[str]:
    """Every name the ``scoring`` option's annotation allows (its ``Literal`` values)."""
    hints = typing.get_type_hints(type(benchmark.options))

    def literals(annotation: Any) -> list[str]:
        if typing.get_origin(annotation) is typing.Literal:
            return [str(a) for a in typing.get_args(annotation)]
        return [name for inner in typing.get_args(annotation) for name in literals(inner)]

    return list(dict.fromkeys(literals(hints.get("scoring", Any))))


def unmasked_conflict(benchmark: Benchmark) -> str | None:
    """Why Self-Debias cannot score the chosen scorings (one reads no masked position), or
    None; the text names those scorings, what they read and the option value to use."""
    names = chosen(getattr(benchmark.options, "scoring", None))
    unmasked = [name for name in names if name in benchmark.unmasked_scorings]
    if not unmasked:
        return None
    if len(names) == 1:
        reads = f"scoring={names[0]} reads {benchmark.unmasked_scorings[names[0]]}"
    else:
        groups: dict[str, list[str]] = {}
        for name in unmasked:
            groups.setdefault(benchmark.unmasked_scorings[name], []).append(name)
        reads = f"scoring=[{','.join(names)}]: " + "; ".join(
            f"{' and '.join(group)} read{'s' if len(group) == 1 else ''} {what}"
            for what, group in groups.items()
        )
    masked = [name for name in names if name not in unmasked]
    if not masked:  # the first scoring that masks (the default, where that masks)
        masked = [n for n in choices(benchmark) if n not in benchmark.unmasked_scorings][:1]
    use = masked[0] if len(masked) == 1 else f"[{','.join(masked)}]"
    return (
        f"{reads} and Self-Debias decays masked predictions only; use "
        f"--option {benchmark.name}.scoring={use}"
    )
