"""The cells of a study: one ``train.py`` run each, at a path that names it.

A cell is ``STUDY/runs/<model>/<method>/<axis>/seed-<k>/``; the undebiased model's cells are
``STUDY/runs/<model>/base/<axis>/seed-0/`` (scored once per model and axis: scoring does not
depend on a training seed). A cell's *keys* are everything that decides its run: the
recipe file's contents and the ``key=value`` overrides ``train.py`` gets. Their hash is
recorded when the cell runs, so a rerun can tell which key of a finished cell changed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cdsbias.errors import CdsbiasError
from cdsbias.studies.spec import BASE, METHOD_KEYS, StudySpec

#: What a base cell runs: the recipe's model as loaded, scored, nothing trained (its
#: downstream results are every method cell's ``base`` role already).
BASE_KEYS: dict[str, Any] = {"cds_mode": "none", "downstream_tasks": {}}


@dataclass(frozen=True)
class Cell:
    """One run of a study.

    Attributes:
        model: The model's label (a folder name).
        method: The method's name, or ``base``.
        axis: The axis the method is fitted on (the run's ``bias_axis``).
        seed: The training seed.
        recipe: The base recipe file the run starts from.
        keys: The ``key=value`` overrides of ``train.py`` (``output_dir`` aside).
    """

    model: str
    method: str
    axis: str
    seed: int
    recipe: str
    keys: dict[str, Any]

    @property
    def id(self) -> str:
        """``<model>/<method>/<axis>/seed-<k>``: the cell's path under ``runs/``."""
        return f"{self.model}/{self.method}/{self.axis}/seed-{self.seed}"

    @property
    def is_base(self) -> bool:
        return self.method == BASE

    def folder(self, study: Path) -> Path:
        """The cell's run folder (``train.py``'s ``output_dir``)."""
        return Path(study) / "runs" / self.id

    def record(self) -> dict[str, Any]:
        """What decides the cell's run: the recipe's contents and the overrides."""
        recipe = yaml.safe_load(Path(self.recipe).read_text(encoding="utf-8")) or {}
        return {"recipe_file": self.recipe, "recipe": recipe, "keys": self.keys}

    def spec_hash(self) -> str:
        """:func:`record_hash` of :meth:`record`: equal iff the run would be the same."""
        return record_hash(self.record())

    def arguments(self, study: Path) -> list[str]:
        """``train.py``'s arguments: the recipe and every override as ``key=JSON``."""
        keys = {**self.keys, "output_dir": str(self.folder(study))}
        return [self.recipe, *(f"{k}={json.dumps(v)}" for k, v in keys.items())]


def record_hash(record: dict[str, Any]) -> str:
    """sha256 of a cell's :meth:`Cell.record` (keys sorted)."""
    text = json.dumps(record, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def expand(spec: StudySpec) -> list[Cell]:
    """Every cell of ``spec``: per model, the base cells (one per axis, seed 0) when
    ``spec.base``, then each method x its axes x the seeds, in the spec's order."""
    shared: dict[str, Any] = {}
    if spec.benchmarks is not None:
        shared["bias_benchmarks"] = spec.benchmarks
    if spec.measure_axes is not None:
        shared["bias_axes"] = spec.measure_axes
    if spec.downstream is not None:
        shared["downstream_tasks"] = spec.downstream
    if spec.wandb:
        shared["report_to"] = "wandb"
    cells = []
    for label, model in spec.models.items():
        axes = list(dict.fromkeys(a for m in spec.methods for a in spec.method_axes(m)))
        if spec.base:
            for axis in axes:
                keys = {**spec.overrides, **shared, **spec.command_line, **BASE_KEYS}
                keys["run_name"] = BASE
                keys.update(
                    model_name_or_path=model,
                    bias_axis=spec.axis_reference(axis),
                    seed=spec.seeds[0],
                )
                cells.append(Cell(label, BASE, axis, spec.seeds[0], spec.recipe, keys))
        for method, entry in spec.methods.items():
            recipe = str(entry.get("recipe") or spec.recipe)
            method_keys = {k: v for k, v in entry.items() if k not in METHOD_KEYS}
            for axis in spec.method_axes(method):
                for seed in spec.seeds:
                    keys = {"run_name": method, **spec.overrides, **shared, **method_keys}
                    keys.update(spec.command_line)
                    keys.update(
                        model_name_or_path=model, bias_axis=spec.axis_reference(axis), seed=seed
                    )
                    cells.append(Cell(label, method, axis, seed, recipe, keys))
    return cells


def changed_key(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The first key whose value differs between two :meth:`Cell.record` values, as
    ``key: OLD -> NEW`` (``recipe_file``, a key of the recipe file, or an override)."""
    if old.get("recipe_file") != new.get("recipe_file"):
        return f"recipe: {old.get('recipe_file')} -> {new.get('recipe_file')}"
    for part, where in (("keys", ""), ("recipe", f"{new.get('recipe_file')}: ")):
        before, after = old.get(part) or {}, new.get(part) or {}
        for key in sorted(set(before) | set(after)):
            if json.dumps(before.get(key), default=str) != json.dumps(after.get(key), default=str):
                shown = [before.get(key, "(unset)"), after.get(key, "(unset)")]
                return f"{where}{key}: {shown[0]!r} -> {shown[1]!r}"
    return "(no key differs)"


def check_cells(cells: list[Cell], study: Path) -> None:
    """Builds each cell's recipe as ``train.py`` would, with the registries' own checks
    (recipe keys and values, the axis and its language, the benchmarks and their axis
    scope, the downstream tasks), without reading any data or model.

    Raises:
        CdsbiasError: The first problem, naming the cell and the key.
    """
    import warnings

    from cdsbias.downstream import get_task
    from cdsbias.train.config import load_recipe

    checked: set[str] = set()
    for cell in cells:
        arguments = cell.arguments(study)
        signature = json.dumps([cell.recipe, {**cell.keys, "seed": 0}], sort_keys=True, default=str)
        if signature in checked:  # seeds of one method and axis build the same recipe
            continue
        checked.add(signature)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # train.py says them again when the cell runs
                recipe = load_recipe(arguments[0], arguments[1:])
            for name, options in recipe.bias.downstream_tasks.items():
                options = dict(options)
                data_dir = options.pop("data_dir", None)
                get_task(name)(options, Path(data_dir) if data_dir else None)
        except CdsbiasError as exc:
            where = "the base model" if cell.is_base else f"method '{cell.method}'"
            raise CdsbiasError(f"{where}, axis '{cell.axis}' ({cell.id}): {exc}") from None
