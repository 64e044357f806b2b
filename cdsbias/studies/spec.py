"""A study spec: the grid of runs one YAML names (models x methods x axes x seeds).

A study is ``cdsbias study run SPEC``: every cell of the grid is one ordinary ``train.py``
run (the run-folder contract of :mod:`cdsbias.runs.folder`), built from a base recipe, the
spec's overrides and the method's recipe keys. The spec's own keys are the fields of
:class:`StudySpec`; its checks run in ``__post_init__`` (names, shapes), then
:func:`cdsbias.studies.cells.check_cells` builds every cell's recipe with the recipe
loader, the axis registry, the benchmark registry and the downstream task registry, so a
bad spec is one ``error:`` line before any cell starts.

docs/studies.md has the reference and an example; ``studies/*.yaml`` are shipped studies.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError, did_you_mean
from cdsbias.io import read_yaml_mapping

#: A name that becomes a folder of the study (a model label, a method, an axis).
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")
#: Method entries' keys that are the study's, not the recipe's.
METHOD_KEYS = ("recipe", "axes", "published_as")
#: The row of the undebiased model; no method may take its name.
BASE = "base"
#: Recipe keys the study sets in every cell (a spec that sets them is refused).
STUDY_KEYS = ("output_dir", "seed", "bias_axis", "model_name_or_path")


@dataclass
class SlurmSpec:
    """How ``--executor slurm`` asks for each cell (submitit's Slurm parameters).

    Attributes:
        partition: Slurm partition (None: the cluster's default).
        gpus_per_cell: GPUs of one cell; above 0 the cell is launched with
            ``accelerate launch`` on that many processes.
        cpus_per_cell: CPU cores of one cell.
        time_min: Time limit of one cell, in minutes.
        array_parallelism: Cells of the job array that run at once.
        accelerate_config: The recipe's accelerate config for GPU cells
            (``recipes/accelerate/*.yaml``); None: accelerate's defaults.
        mem_gb: Memory of one cell, in GB.
    """

    partition: str | None = None
    gpus_per_cell: int = 0
    cpus_per_cell: int = 2
    time_min: int = 120
    array_parallelism: int = 64
    accelerate_config: str | None = None
    mem_gb: int = 32

    def __post_init__(self) -> None:
        for name in ("gpus_per_cell", "cpus_per_cell", "time_min", "array_parallelism", "mem_gb"):
            value = getattr(self, name)
            low = 0 if name == "gpus_per_cell" else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise CdsbiasError(f"slurm.{name} must be an integer >= {low}, got {value!r}.")
        if self.accelerate_config is not None and not Path(self.accelerate_config).is_file():
            raise CdsbiasError(f"slurm.accelerate_config: {self.accelerate_config} is not a file.")


@dataclass
class StudySpec:
    """A study: models x methods x axes x seeds, each cell one ``train.py`` run.

    Attributes:
        name: The study's name: its default folder (``runs/studies/NAME``) and W&B group.
        recipe: The base recipe every cell starts from (a ``recipes/*.yaml`` path).
        methods: Method name -> recipe keys (``cda: {cds_mode: cda}``); ``recipe:`` gives
            the method another base recipe, ``axes:`` the axes it is fitted on (default:
            the spec's ``axes``), ``published_as:`` the published method it reproduces (a
            key of :data:`cdsbias.benchmarks.published.METHODS`: the table prints that
            method's published values beside the row's).
        models: Model label -> ``model_name_or_path``; a list takes each model's last path
            part as label (``google-bert/bert-base-uncased`` -> ``bert-base-uncased``).
        overrides: Recipe keys applied to every cell, after the base recipe.
        axes: The axes each method is fitted on (the cell's ``bias_axis``): registered
            names, or ``{label: reference}`` where a reference is anything ``bias_axis``
            takes (a registered name such as ``race@bias-bench``, bias-bench's own word
            lists, or an attribute file ``FILE.json#key``), e.g. ``bb-race:
            race@bias-bench``. The label names the cell's folder.
        seeds: Training seeds: a count (``3`` = 0, 1, 2) or a list.
        benchmarks: ``bias_benchmarks`` of every cell (None: the recipe's).
        measure_axes: ``bias_axes`` of every cell: the axes each cell is scored on (None:
            the recipe's, else the fitted axis alone).
        downstream: ``downstream_tasks`` of every cell (None: the recipe's).
        base: Score the undebiased model once per model and axis (the table's base row).
        wandb: Log each cell as a W&B run in the study's group, and the table as a W&B
            Table (offline without a key).
        slurm: :class:`SlurmSpec` for ``--executor slurm``.
        command_line: Recipe keys given on the command line: every cell's, applied last
            (over the spec's overrides, benchmarks and method keys).
        source: The spec file (set by :func:`load_spec`).
    """

    name: str
    recipe: str
    methods: dict[str, dict[str, Any]]
    models: dict[str, str] | list[str]
    overrides: dict[str, Any] = field(default_factory=dict)
    axes: list[str] | dict[str, str] = field(default_factory=lambda: ["gender"])
    seeds: int | list[int] = 1
    benchmarks: Any = None
    measure_axes: list[str] | None = None
    downstream: Any = None
    base: bool = True
    wandb: bool = False
    slurm: SlurmSpec | dict[str, Any] = field(default_factory=SlurmSpec)
    command_line: dict[str, Any] = field(default_factory=dict)
    source: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _SAFE.fullmatch(self.name):
            raise CdsbiasError(
                f"name must be a folder-safe name (letters, digits, ._-), got {self.name!r}."
            )
        if not isinstance(self.recipe, str) or not Path(self.recipe).is_file():
            raise CdsbiasError(
                f"recipe: {self.recipe!r} is not a recipe file (e.g. recipes/gap_cds.yaml)."
            )
        self.models = _model_labels(self.models)
        self.overrides = _mapping("overrides", self.overrides)
        self.command_line = _mapping("command line", self.command_line)
        self.methods = _methods(self.methods)
        self.axes = _axes(self.axes)
        self.seeds = _seeds(self.seeds)
        if self.measure_axes is not None:
            self.measure_axes = _names("measure_axes", self.measure_axes)
        for where, keys in (
            ("overrides.", self.overrides),
            ("the command line's ", self.command_line),
        ):
            for key in STUDY_KEYS:
                if key in keys:
                    raise CdsbiasError(
                        f"{where}{key}: the study sets {key} in every cell; remove it."
                    )
        for flag in ("base", "wandb"):
            if not isinstance(getattr(self, flag), bool):
                raise CdsbiasError(f"{flag} must be true or false, got {getattr(self, flag)!r}.")
        if isinstance(self.slurm, dict):
            self.slurm = _build(SlurmSpec, self.slurm, "slurm.")

    def method_axes(self, method: str) -> list[str]:
        """The labels of the axes ``method`` is fitted on: its own ``axes`` that are the
        study's (in the study's order), else all of the study's. A method whose axes the
        study does not run (``--set axes=...`` on a first try) has none."""
        own = self.methods[method].get("axes")
        return [a for a in self.axes if own is None or a in own]

    def axis_reference(self, label: str) -> str:
        """What a cell fitted on axis ``label`` gets as ``bias_axis``."""
        return self.axes.get(label, label)

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain values (what ``study.yaml`` in the study folder records)."""
        values = dataclasses.asdict(self)
        values.pop("source")
        return values


def _build(cls: type, values: Any, prefix: str) -> Any:
    """``cls(**values)``, an unknown key named with the nearest one."""
    if not isinstance(values, dict):
        raise CdsbiasError(f"{prefix.rstrip('.') or 'the spec'} must be a mapping of key: value.")
    fields = [f.name for f in dataclasses.fields(cls) if f.name != "source"]
    for key in values:
        if key not in fields:
            hint = did_you_mean(str(key), fields)
            raise CdsbiasError(f"unknown study key '{prefix}{key}'. {hint}".strip())
    missing = [
        f.name
        for f in dataclasses.fields(cls)
        if f.name not in values
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise CdsbiasError(f"the study spec needs {', '.join(prefix + m for m in missing)}.")
    return cls(**values)


def _mapping(key: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CdsbiasError(f"{key} must be a mapping of recipe key: value, got {value!r}.")
    return {str(k): v for k, v in value.items()}


def _safe(key: str, name: Any) -> str:
    name = str(name)
    if not _SAFE.fullmatch(name):
        raise CdsbiasError(f"{key}: {name!r} is not a folder-safe name (letters, digits, ._@+-).")
    return name


def _names(key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise CdsbiasError(f"{key} must be a non-empty list of names, got {value!r}.")
    names = [_safe(key, v) for v in value]
    if len(set(names)) != len(names):
        raise CdsbiasError(f"{key} names an entry twice: {names}.")
    return names


def _axes(value: Any) -> dict[str, str]:
    """``[gender, race]`` or ``{label: reference}`` -> ``{label: reference}``."""
    if isinstance(value, dict) and value:
        return {_safe("axes", label): str(reference) for label, reference in value.items()}
    return {name: name for name in _names("axes", value)}


def _seeds(value: Any) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise CdsbiasError(f"seeds must be a count >= 1 or a list of seeds, got {value}.")
        return list(range(value))
    if isinstance(value, list) and value and all(isinstance(v, int) and v >= 0 for v in value):
        if len(set(value)) != len(value):
            raise CdsbiasError(f"seeds names a seed twice: {value}.")
        return list(value)
    raise CdsbiasError(f"seeds must be a count >= 1 or a list of seeds >= 0, got {value!r}.")


def _model_labels(value: Any) -> dict[str, str]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and value:
        labels: dict[str, str] = {}
        for model in value:
            label = Path(str(model).rstrip("/")).name
            if label in labels:
                raise CdsbiasError(
                    f"models: {labels[label]} and {model} both get the label '{label}'; give "
                    "models as a mapping {label: model} to tell them apart."
                )
            labels[_safe("models", label)] = str(model)
        return labels
    if isinstance(value, dict) and value:
        return {_safe("models", k): str(v) for k, v in value.items()}
    raise CdsbiasError(
        f"models must be a list of models or a mapping {{label: model}}, got {value!r}."
    )


def _methods(value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict) or not value:
        raise CdsbiasError(
            "methods must be a mapping {name: {recipe key: value}}, e.g. {cda: {cds_mode: cda}}."
        )
    methods = {}
    for name, keys in value.items():
        name = _safe("methods", name)
        if name == BASE:
            raise CdsbiasError(
                f"methods: '{BASE}' is the undebiased model's row; name the method otherwise."
            )
        keys = _mapping(f"methods.{name}", keys)
        for key in STUDY_KEYS:
            if key in keys:
                raise CdsbiasError(
                    f"methods.{name}.{key}: the study sets {key} in every cell; remove it."
                )
        if "recipe" in keys and not Path(str(keys["recipe"])).is_file():
            raise CdsbiasError(f"methods.{name}.recipe: {keys['recipe']} is not a recipe file.")
        if "axes" in keys:
            keys["axes"] = _names(f"methods.{name}.axes", keys["axes"])
        if "published_as" in keys:
            from cdsbias.benchmarks.published import METHODS as PUBLISHED_METHODS

            published = keys["published_as"]
            if published not in PUBLISHED_METHODS:
                hint = did_you_mean(str(published), PUBLISHED_METHODS)
                raise CdsbiasError(
                    f"methods.{name}.published_as: unknown published method {published!r}; "
                    f"known: {', '.join(PUBLISHED_METHODS)}. {hint}".strip()
                )
        methods[name] = keys
    return methods


def load_spec(
    path: str | Path,
    overrides: list[str] | None = None,
    *,
    models: Any = None,
    study_keys: list[str] | None = None,
) -> StudySpec:
    """Reads a study spec.

    Args:
        path: The spec file.
        overrides: ``key=value`` recipe keys of every cell, applied last.
        models: A list or ``{label: model}`` that replaces the spec's models.
        study_keys: ``key=value`` study keys that replace the spec's (``seeds=1``,
            ``axes=[race]``), e.g. a small first try of a large study.

    Raises:
        CdsbiasError: A missing or unreadable file, an unknown key (with the nearest one),
            a value of the wrong shape.
    """
    from cdsbias.options import parse_key_values

    path = Path(path)
    values = read_yaml_mapping(path, "study spec", empty_ok=False)
    values.pop("source", None)
    values.update(parse_key_values(study_keys or [], "--set"))
    values["command_line"] = parse_key_values(overrides or [], "Override")
    if models is not None:
        values["models"] = models
    try:
        spec = _build(StudySpec, values, "")
    except CdsbiasError as exc:
        raise CdsbiasError(f"{path}: {exc}") from None
    spec.source = str(path)
    return spec
