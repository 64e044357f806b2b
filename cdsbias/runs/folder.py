"""The run folder: one module owns its file names, writers and readers.

A ``train.py`` output folder holds:

============================== ============================================================
``recipe.yaml``                every recipe key with the value in effect (the effective
                               config; finished runs are read from it, never re-defaulted)
``run_info.json``              base model hub id, corpus, the card's recipe keys, the method
                               plan with its parameter counts, the mitigated bias axis
                               with whose word lists (:func:`build_run_info`)
``bias_metrics.jsonl``         one point per evaluated step (:mod:`cdsbias.runs.points`)
``bias_curve.png``             headline metrics and held-out loss per step
``bias/step-N/<benchmark>/``   ``rows.tsv`` and ``summary.json`` of every evaluated step, and
                               the benchmark's further tables (``<table>.tsv``; a benchmark
                               scoped to an axis: ``NAME@AXIS``)
                               (``step-N-posthoc``: after the post-hoc method acted)
``checkpoint-N/``              the Trainer's checkpoint, plus ``bias_summary.json`` and the
                               files a method saves beside it (e.g. an adapter)
``trainer_state.json``         the Trainer's state at the end (``train_runtime``)
``posthoc_fit.json``           a post-hoc method's fit: method, word-list hash, sentences
                               per class, per-iteration accuracy, rank removed, seconds
============================== ============================================================

Readers accept folders from earlier releases: a run without ``run_info.json`` gets one
derived from its recipe (:meth:`RunFolder.run_info`), a recipe without method keys is full
fine-tuning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from cdsbias.data.corpora import describe_corpus
from cdsbias.errors import CdsbiasError
from cdsbias.hub import hub_model_id
from cdsbias.io import atomic_write_text
from cdsbias.methods import MethodPlan, plan_from_values
from cdsbias.runs.card_recipe import card_recipe

RECIPE_FILE = "recipe.yaml"
RUN_INFO_FILE = "run_info.json"
METRICS_FILE = "bias_metrics.jsonl"
CURVE_FILE = "bias_curve.png"
RESULTS_DIR = "bias"
CHECKPOINT_SUMMARY_FILE = "bias_summary.json"
TRAINER_STATE_FILE = "trainer_state.json"
#: Files whose presence makes a folder hold a run (never overwritten unless told to).
RUN_MARKERS = (METRICS_FILE, TRAINER_STATE_FILE, "config.json", RECIPE_FILE)
#: Files that describe the run on this machine (they name its paths): never uploaded.
RUN_RECORDS = frozenset({RECIPE_FILE, RUN_INFO_FILE})
POSTHOC_FIT_FILE = "posthoc_fit.json"
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")


def _point_order(point: Mapping[str, Any]) -> tuple[int, bool]:
    """Points by step; a step's post-hoc point after its plain one."""
    return point["step"], bool(point.get("posthoc"))


def build_run_info(
    effective: Mapping[str, Any],
    *,
    corpus: dict[str, Any],
    method: dict[str, Any] | None,
) -> dict[str, Any]:
    """``run_info.json``: what the publisher, ``compare`` and a study's table need of a run.

    Args:
        effective: The run's effective recipe (plain values, as in ``recipe.yaml``).
        corpus: :func:`cdsbias.data.corpora.describe_corpus` of its training corpus.
        method: :meth:`cdsbias.methods.MethodPlan.summary` of the trained model (None when
            it was not recorded).

    ``bias_axis`` records the axis the run mitigates (:func:`axis_record`).
    """
    scratch = effective.get("init_from_scratch")
    info = {
        "base_model": None if scratch else hub_model_id(effective.get("model_name_or_path")),
        "corpus": corpus,
        "card_recipe": card_recipe(dict(effective)),
        "method": method,
    }
    recorded = axis_record(effective.get("bias_axis"))
    if recorded is not None:
        info["bias_axis"] = recorded
    return info


def axis_record(reference: Any) -> dict[str, Any] | None:
    """The axis a run mitigates as ``run_info.json`` keeps it: name, groups, whose word lists
    (``BiasAxis.word_lists``: ``cdsbias``, ``bias-bench`` or a user's ``file``, which CDA and
    the post-hoc fits read, so a results table can say which lists a number used) and hash;
    for a user's attribute file also its tuples and forms and its file name (not its path),
    so the finished run reads its axis after the file has moved. None for a file that
    cannot be read now."""
    from cdsbias.axes import DEFAULT_AXIS, get_axis, is_axis_file
    from cdsbias.axes.files import split_reference

    reference = str(reference or DEFAULT_AXIS)
    try:
        axis = get_axis(reference)
    except CdsbiasError:
        return None
    record: dict[str, Any] = {
        "name": axis.name,
        "groups": list(axis.groups),
        "word_lists": axis.word_lists,
    }
    if is_axis_file(reference):
        record.update(
            tuples=[list(words) for words in axis.tuples],
            forms=list(axis.forms),
            source=split_reference(reference)[0].name,
        )
    record["hash"] = axis.hash
    return record


def axis_name(recipe: Mapping[str, Any]) -> str:
    """The axis a run was debiased for, as a reader names it: ``religion``, or a user
    file's key or stem (``age`` for ``/home/me/age.tsv``); never a path of this machine."""
    from cdsbias.axes import DEFAULT_AXIS, is_axis_file
    from cdsbias.axes.files import split_reference

    reference = str(recipe.get("bias_axis") or DEFAULT_AXIS)
    if not is_axis_file(reference):
        return reference
    path, key = split_reference(reference)
    return key or path.stem


class RunFolder:
    """A run's output folder (``train.py``'s ``output_dir``).

    Args:
        path: The folder.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def of(cls, checkpoint: str | Path) -> RunFolder:
        """The run a checkpoint belongs to (the folder itself, or the one above it).

        Raises:
            CdsbiasError: Neither holds evaluation points.
        """
        checkpoint = Path(checkpoint)
        for place in (checkpoint, checkpoint.parent):
            if (place / METRICS_FILE).exists():
                return cls(place)
        raise CdsbiasError(
            f"{checkpoint} is not a cdsbias run or checkpoint (no {METRICS_FILE} beside it)."
        )

    # ------------------------------------------------------------------ paths
    @property
    def metrics_file(self) -> Path:
        return self.path / METRICS_FILE

    @property
    def curve_file(self) -> Path:
        return self.path / CURVE_FILE

    def results_dir(self, step: int, *, posthoc: bool = False) -> Path:
        """Where every benchmark's ``rows.tsv`` and ``summary.json`` of ``step`` go
        (``step-N-posthoc``: the point after the post-hoc method acted)."""
        return self.path / RESULTS_DIR / (f"step-{step}" + ("-posthoc" if posthoc else ""))

    def checkpoints(self) -> list[Path]:
        """``checkpoint-N`` folders, by step."""
        found = [p for p in self.path.glob("checkpoint-*") if _CHECKPOINT.fullmatch(p.name)]
        return sorted(found, key=lambda p: int(p.name.split("-")[1]))

    def holds_run(self) -> bool:
        """Whether the folder holds a run (a checkpoint or any run file)."""
        return self.path.is_dir() and (
            bool(self.checkpoints()) or any((self.path / m).exists() for m in RUN_MARKERS)
        )

    @staticmethod
    def step_of(checkpoint: Path) -> int | None:
        """The step of a ``checkpoint-N`` folder, else None."""
        match = _CHECKPOINT.fullmatch(Path(checkpoint).name)
        return int(match.group(1)) if match else None

    # ------------------------------------------------------------------ the recipe
    def recipe(self) -> dict[str, Any]:
        """The effective recipe (empty for a folder without one)."""
        return self._load(self.path / RECIPE_FILE)

    def write_recipe(self, effective: Mapping[str, Any]) -> str:
        """Writes ``recipe.yaml`` (plain YAML/JSON-safe values); returns its text."""
        plain = json.loads(json.dumps(dict(effective), default=str))
        text = yaml.safe_dump(plain, sort_keys=True)
        atomic_write_text(self.path / RECIPE_FILE, text)
        return text

    # ------------------------------------------------------------------ run info
    def run_info(self) -> dict[str, Any]:
        """``run_info.json``; for a run without one, derived from its recipe."""
        path = self.path / RUN_INFO_FILE
        if path.exists():
            return self._load(path)
        recipe = self.recipe()
        return build_run_info(recipe, corpus=describe_corpus(recipe), method=None)

    def write_run_info(self, info: Mapping[str, Any]) -> None:
        atomic_write_text(self.path / RUN_INFO_FILE, json.dumps(info, indent=2) + "\n")

    def trainer_state(self) -> dict[str, Any]:
        """The Trainer's saved state (empty when the run saved none)."""
        return self._load(self.path / TRAINER_STATE_FILE)

    # ------------------------------------------------------------------ points
    def points(self) -> list[dict[str, Any]]:
        """The evaluated points, in step order (empty when there are none)."""
        path = self.metrics_file
        if not path.exists():
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
        try:
            points = [json.loads(line) for line in lines if line]
        except ValueError as exc:  # JSONDecodeError: a damaged or hand-edited line
            raise CdsbiasError(f"{path} is not valid run output: {exc}") from None
        return sorted(points, key=_point_order)

    def write_points(self, points: list[dict[str, Any]]) -> None:
        text = "".join(json.dumps(p, sort_keys=True) + "\n" for p in points)
        atomic_write_text(self.metrics_file, text)

    def add_point(self, point: dict[str, Any]) -> None:
        """Adds (or replaces) the point of ``point["step"]`` (a post-hoc point, flagged
        ``posthoc``, sits after the plain point of its step)."""
        kept = [p for p in self.points() if _point_order(p) != _point_order(point)]
        self.write_points(sorted([*kept, point], key=_point_order))

    def fit_record(self) -> dict[str, Any]:
        """The post-hoc fit's record (empty when the run fitted nothing): which method was
        fitted, on which sentences, how long it took (written by
        :meth:`cdsbias.methods.erasure.AffineErasure.save`)."""
        return self._load(self.path / POSTHOC_FIT_FILE)

    def summary_at(
        self, step: int, benchmark: str, *, posthoc: bool = False
    ) -> dict[str, Any] | None:
        """A benchmark's ``summary.json`` at ``step`` (``posthoc``: its post-hoc point), if
        it was written; ``benchmark`` is its result key (``NAME[AXIS]``, in the folder
        ``NAME@AXIS`` or, written so by earlier runs, ``NAME[AXIS]``)."""
        from cdsbias.benchmarks.axis_scope import result_folder

        folder = result_folder(self.results_dir(step, posthoc=posthoc), benchmark)
        path = folder / "summary.json"
        return self._load(path) if path.exists() else None  # damaged: one error naming it

    def write_checkpoint_summary(self, step: int, text: str) -> None:
        """``checkpoint-N/bias_summary.json`` (when that checkpoint exists)."""
        folder = self.path / f"checkpoint-{step}"
        if step > 0 and folder.is_dir():
            atomic_write_text(folder / CHECKPOINT_SUMMARY_FILE, text)

    # ------------------------------------------------------------------ the methods
    def plan(self) -> MethodPlan:
        """The method plan the run trained with, rebuilt from its effective recipe (a
        user's attribute file that has moved since: the copy ``run_info.json`` keeps)."""
        from cdsbias.axes import BiasAxis, is_axis_file
        from cdsbias.axes.files import split_reference

        values = self.recipe()
        reference = str(values.get("bias_axis") or "")
        has_info = (self.path / RUN_INFO_FILE).exists()
        recorded = self.run_info().get("bias_axis") if has_info else None
        if recorded and is_axis_file(reference) and not split_reference(reference)[0].is_file():
            values = {
                **values,
                "bias_axis": BiasAxis(
                    name=recorded["name"],
                    groups=tuple(recorded["groups"]),
                    tuples=tuple(tuple(words) for words in recorded["tuples"]),
                    forms=tuple(recorded.get("forms") or ()),
                    source=recorded.get("source", ""),
                    word_lists=recorded.get("word_lists", "file"),
                ),
            }
        return plan_from_values(values)

    def require_recipe(self) -> dict[str, Any]:
        """The effective recipe, which must be there: what states how the model was made.

        Raises:
            CdsbiasError: ``recipe.yaml`` is missing (a run copied in part).
        """
        if not (self.path / RECIPE_FILE).is_file():
            raise CdsbiasError(
                f"{self.path / RECIPE_FILE} is missing, so the folder does not say how the "
                "model was trained (method, corpus treatment, axis); copy it back from where "
                "the run was written."
            )
        return self.recipe()

    @staticmethod
    def _load(path: Path) -> dict[str, Any]:
        """A run's YAML or JSON file as a mapping (empty when absent)."""
        if not path.exists():
            return {}
        parse = json.loads if path.suffix == ".json" else yaml.safe_load
        try:
            value = parse(path.read_text(encoding="utf-8"))
        except (ValueError, yaml.YAMLError) as exc:
            problem = str(exc).splitlines()[0]
            raise CdsbiasError(f"{path} cannot be read ({problem}); is the run complete?") from None
        return value if isinstance(value, dict) else {}
