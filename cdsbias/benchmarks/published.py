"""Values papers publish for known models, and whether a measured value is comparable.

Each benchmark declares, beside its code, the values published for hub models
(:attr:`cdsbias.benchmarks.Benchmark.published`), as the ``evaluate`` library's metric
cards list "values from popular papers". ``cdsbias evaluate`` and ``cdsbias report`` print
``published: X (source; protocol)`` beside the measured value when the model is the one the
paper scored, and say what differs when the protocol does not match. Users comparing their
numbers with a paper's get the answer to "why does mine differ?" before they ask it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Hub ids that name the same checkpoint (the hub moved the original BERT family under
#: organisations; both spellings load the same weights).
ALIASES = {
    "google-bert/bert-base-uncased": "bert-base-uncased",
    "google-bert/bert-base-cased": "bert-base-cased",
    "google-bert/bert-large-uncased": "bert-large-uncased",
    "FacebookAI/roberta-base": "roberta-base",
    "FacebookAI/roberta-large": "roberta-large",
    "albert/albert-base-v2": "albert-base-v2",
}


def canonical_model_id(model_id: str) -> str:
    """``model_id`` with the hub's organisation aliases of legacy ids resolved."""
    return ALIASES.get(model_id, model_id)


#: Debiasing methods whose results papers publish (:attr:`PublishedValue.method`), by the
#: names Meade et al. (2022, bias-bench) print them, with what each is. A study's method
#: names the one it reproduces with ``published_as`` (docs/studies.md). These are the
#: papers' labels, not cdsbias's method registry (:mod:`cdsbias.methods` owns that).
METHODS = {
    "CDA": "counterfactual data augmentation, further pre-training on the augmented text",
    "Dropout": "further pre-training with more dropout (hidden 0.20, attention 0.15)",
    "INLP": "iterative nullspace projection fitted on the axis's sentences",
    "SentenceDebias": "the axis's SentenceDebias subspace projected out",
    "Self-Debias": "Self-Debias with the axis's prefix",
}


@dataclass(frozen=True)
class PublishedValue:
    """One value a paper published for one model.

    Attributes:
        model: Hub id of the model scored (legacy spelling, e.g. ``bert-base-uncased``).
        metric: Key of the measured metric it corresponds to.
        value: The published number, in the metric's unit.
        source: Paper, table (and where it was checked), e.g. "Meade et al. 2022, Table 2".
        protocol: How the number was produced, in words.
        scope: Options that select *what* is measured (a subset, a test list); the value is
            only mentioned when they match.
        options: Options of the protocol; a mismatch is named ("scoring is nangia here").
        data_note: A difference that always holds for the shipped data (e.g. the paper
            scored the test split, cdsbias ships the dev split); empty when none.
        decimals: Decimals the paper printed (``0.620`` stays ``0.620``).
        method: The debiasing method applied to ``model`` before it was scored (a key of
            :data:`METHODS`); empty for the model as released.
        fitted_axis: The bias axis the method was fitted on (``gender``, ``race``,
            ``religion``); empty when ``method`` is.
        word_lists: Whose attribute word lists the method was fitted with (``bias-bench``);
            a measured method fitted with others is named "not like for like".
    """

    model: str
    metric: str
    value: float
    source: str
    protocol: str
    scope: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    data_note: str = ""
    decimals: int = 2
    method: str = ""
    fitted_axis: str = ""
    word_lists: str = ""


def per_category(
    metric: str, category: str, value: float, source: str, protocol: str, **fields: Any
) -> tuple[PublishedValue, PublishedValue]:
    """One bert-base-uncased value of one category, as both keys a run can report it under:
    ``<metric>_<category>`` of a run over every category (``bias_type`` unset) and
    ``<metric>`` of a run scoped to that category (``bias_type: <category>``).

    Args:
        metric: The metric's key (``ss``, ``metric_score``).
        category: The benchmark's category (``race``, ``race-color``).
        value, source, protocol: As :class:`PublishedValue`.
        **fields: The other fields (``options``, ``method``, ``fitted_axis``, ...).
    """
    return (
        PublishedValue("bert-base-uncased", f"{metric}_{category}", value, source, protocol,
                       scope={"bias_type": None}, **fields),
        PublishedValue("bert-base-uncased", metric, value, source, protocol,
                       scope={"bias_type": category}, **fields),
    )  # fmt: skip


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, list | tuple) and isinstance(theirs, list | tuple):
        return sorted(map(str, ours)) == sorted(map(str, theirs))
    return ours == theirs


def published_notes(
    values: tuple[PublishedValue, ...],
    model_id: str | None,
    metrics: Mapping[str, float],
    options: Mapping[str, Any],
    *,
    own_data: bool = False,
    method: str = "",
    fitted_axis: str = "",
    word_lists: str = "",
) -> list[str]:
    """One line per published value for ``model_id`` among the measured ``metrics``.

    Args:
        values: The benchmark's published values.
        model_id: Hub id of the model measured; ``None`` (a model trained here, an unknown
            folder) gives no lines.
        metrics: The measured metrics.
        options: The benchmark's option values.
        own_data: Whether the rows came from a user's data file instead of the benchmark's.
        method: The published method (:data:`METHODS`) the measured model reproduces;
            empty: the model as released (only values of the undebiased model apply).
        fitted_axis: The axis that method was fitted on (its base axis: ``race`` for
            ``race@bias-bench``); a value published for another axis does not apply.
        word_lists: Whose word lists it was fitted with (``cdsbias``, ``bias-bench``, ...).

    Returns:
        ``"<metric>: measured X; published: Y (source; protocol)"``, followed by
        ``" -- not like for like: ..."`` naming each difference; empty when no value applies.
    """
    if not model_id:
        return []
    model = canonical_model_id(model_id)
    lines = []
    for entry in values:
        if canonical_model_id(entry.model) != model or entry.metric not in metrics:
            continue
        if entry.method != method or (method and entry.fitted_axis != fitted_axis):
            continue
        if not all(_same(options.get(k), v) for k, v in entry.scope.items()):
            continue
        measured = metrics[entry.metric]
        shown = f"{measured:.4g}" if measured is not None and math.isfinite(measured) else "n/a"
        line = (
            f"{entry.metric}: measured {shown}; published: {entry.value:.{entry.decimals}f} "
            f"({entry.source}; {entry.protocol})"
        )
        differences = [
            f"{key} is {options.get(key)!r} here, {value!r} there"
            for key, value in entry.options.items()
            if not _same(options.get(key), value)
        ]
        if own_data:
            differences.append("scored on your data file, not the benchmark's")
        if entry.word_lists and word_lists != entry.word_lists:
            differences.append(
                f"fitted on {word_lists or 'other'} word lists here, {entry.word_lists}'s there"
            )
        if entry.data_note:
            differences.append(entry.data_note)
        if differences:
            line += " -- not like for like: " + "; ".join(differences)
        lines.append(line)
    return lines
