"""The interface every debiasing method implements, and the registry that finds them.

A method is one module of :mod:`cdsbias.methods` holding one :class:`Method` subclass. It
declares, in that module only: its recipe keys (an ``Options`` dataclass: help text,
checks in ``__post_init__``), how a recipe selects it, what it does to a model before
training (:meth:`Method.config_overrides`, :meth:`Method.prepare`), the Trainer callbacks
it needs, the files it saves and how a saved folder is loaded for scoring
(:meth:`Method.holds`, :meth:`Method.attach`), how it is published, its label for
``cdsbias compare`` and its model-card section (what acted, how to load it, citation).

Methods compose through their :attr:`Method.role` (see :mod:`cdsbias.methods.plan`):

* ``weights`` — what trains; exactly one per run (full, partial, LoRA, adapter);
* ``regularizer`` — changes how training runs, not what trains (dropout); any number;
* ``loss`` — adds a term to the training objective (:meth:`Method.loss_terms`); at most one;
* ``posthoc`` — acts on the trained model (:meth:`Method.after_training`), e.g. a
  projection folded into the MLM head, or at scoring time (:meth:`Method.wrap_scorer`),
  e.g. a decoding rule; at most one.

Nothing outside this package names a method: the recipe, the trainer, the loader, the
publisher and the comparison ask the registry. ``docs/adding_a_method.md`` walks through
adding one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from cdsbias.errors import unknown_name_error

Role = Literal["weights", "regularizer", "loss", "posthoc"]
ROLES: tuple[Role, ...] = ("weights", "regularizer", "loss", "posthoc")

#: name -> class, filled by :func:`register` as the method modules are imported.
REGISTRY: dict[str, type[Method]] = {}


@dataclass
class PosthocContext:
    """What a ``posthoc`` method may read after training (:meth:`Method.after_training`).

    Attributes:
        documents: Returns a fresh iterable of the corpus's document texts (original
            text; a stream is read only as far as the caller reads).
        tokenizer: The model's tokenizer.
        scorer: The batched scorer of the model (length-sorted, deduplicated forward
            passes).
        folder: The run folder (:class:`cdsbias.runs.folder.RunFolder`), to record a fit.
        fit: ``fit(method, **arguments)``: a linear erasure fitted on sentences of the
            corpus encoded by ``scorer``
            (:func:`cdsbias.train.posthoc_fit.fit_posthoc`, built by the train layer: a
            method imports neither train nor scoring).
        seed: The run's seed.
        main_process: Whether this process writes the run folder (one process of a
            multi-process launch; ``fit`` already runs there only and hands its result to
            every process).
    """

    documents: Any
    tokenizer: Any
    scorer: Any
    folder: Any
    fit: Any = None
    seed: int = 0
    main_process: bool = True


@dataclass
class NoOptions:
    """Options of a method that has none."""


class Method:
    """One debiasing method. Subclasses set the class attributes and override the hooks
    their role needs; every default does nothing.

    Args:
        options: The method's ``Options`` (default: all defaults).
    """

    #: Registry key (``cdsbias compare`` and ``run_info.json`` record it).
    name: ClassVar[str]
    role: ClassVar[Role]
    #: Short human name, e.g. ``"LoRA"``.
    title: ClassVar[str]
    #: One sentence for ``cdsbias methods`` and the docs.
    description: ClassVar[str]
    #: The recipe keys of the method (a dataclass whose fields are recipe keys).
    Options: ClassVar[type] = NoOptions
    #: What a recipe writes to choose the method, e.g. ``"peft_method: lora"``.
    selected_by: ClassVar[str] = ""
    #: Recipe keys that select the method with small settings, for a BERT (the docs and
    #: the method contract test train with them).
    example: ClassVar[dict[str, Any]] = {}
    #: The paper to cite when the method acted on a published model (None: nothing to cite).
    citation: ClassVar[str | None] = None
    #: Model-card tags when the method acted.
    card_tags: ClassVar[tuple[str, ...]] = ()
    #: How a card names a repository holding the method's own files ("A LoRA adapter").
    card_origin: ClassVar[str] = ""
    #: The card's words for a repository that holds the method merged into full weights.
    card_merged: ClassVar[str] = "it was then merged into the base weights."
    #: The card's ``library_name`` for a repository holding the method's own files (e.g.
    #: ``"peft"``); None: the hub has no library that loads them.
    card_library: ClassVar[str | None] = None
    #: What ``cdsbias publish`` uploads: ``"weights"`` (full weights) or ``"adapter"``.
    publishes: ClassVar[Literal["weights", "adapter"]] = "weights"
    #: Whether ``cdsbias publish --merge`` can fold the method into full weights.
    mergeable: ClassVar[bool] = False
    #: Whether a resumed run loads the model from the checkpoint (full weights); else the
    #: base is rebuilt and the Trainer restores what trains.
    resumes_from_weights: ClassVar[bool] = True
    #: ``posthoc`` role: whether :meth:`after_training` changes saved weights (e.g. folds a
    #: projection into the MLM head), so the run must save full weights.
    edits_weights: ClassVar[bool] = False
    #: Files of a method that acts *on top of* the loaded model, e.g. a forward hook
    #: (``posthoc_apply: hook``): a folder that holds them (:meth:`holds`) is loaded as usual
    #: (full weights or another method's files), then :meth:`attach` adds the method, and
    #: :meth:`usage` continues the card's loading code. ``()``: nothing to attach.
    attached_files: ClassVar[tuple[str, ...]] = ()
    #: What to do instead of training on a folder that holds :attr:`attached_files` (what
    #: acts on top is not weights: training would train under it and save weights without
    #: it), for the error ``train.py`` gives.
    attached_fix: ClassVar[str] = ""
    #: ``posthoc`` role: whether :meth:`wrap_scorer` changes the distribution the scorer
    #: reads (a decoding rule), so the run's held-out loss is read through the scorer too.
    changes_scoring: ClassVar[bool] = False
    #: Whether the method reads the run's bias axis (``bias_axis``: its words, prefix or
    #: groups; :attr:`bias_axis`), so the method contract runs it on every axis.
    reads_axis: ClassVar[bool] = False

    def __init__(self, options: Any = None) -> None:
        self.options = options if options is not None else self.Options()
        #: The run's bias axis (``bias_axis``; :meth:`use_axis`); None: the default, gender.
        self.axis: Any = None

    @property
    def bias_axis(self) -> Any:
        """The run's :class:`~cdsbias.axes.BiasAxis` (gender unless :meth:`use_axis` set
        another)."""
        from cdsbias.axes import get_axis

        return get_axis() if self.axis is None else self.axis

    def use_axis(self, axis: Any) -> None:
        """Sets the run's bias axis (the plan calls it when the recipe is read, so a method
        that cannot act on the axis fails before anything is written: raise
        ``CdsbiasError`` in :meth:`check_axis`)."""
        self.axis = axis
        self.check_axis()

    def check_axis(self) -> None:
        """Checks that the method can act on :attr:`bias_axis` (raise ``CdsbiasError``)."""

    # ------------------------------------------------------------------ the recipe
    @classmethod
    def option_keys(cls) -> tuple[str, ...]:
        """The recipe keys the method declares."""
        return tuple(f.name for f in dataclasses.fields(cls.Options))

    @classmethod
    def is_selected(cls, values: Mapping[str, Any]) -> bool:
        """Whether a recipe with these (effective) ``values`` uses the method."""
        return False

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Method:
        """The method with its options read from recipe ``values`` (absent keys: defaults)."""
        keys = {k: values[k] for k in cls.option_keys() if k in values}
        return cls(cls.Options(**keys))

    def check(self, *, init_from_scratch: bool) -> None:
        """Checks that need more than the options (raise ``CdsbiasError``)."""

    def option_values(self) -> dict[str, Any]:
        """The options as plain values (``run_info.json`` records them)."""
        return dataclasses.asdict(self.options)

    # ------------------------------------------------------------------ training
    def config_overrides(self, model_type: str) -> dict[str, Any]:
        """Config values the model is loaded with (e.g. training dropout)."""
        return {}

    def prepare(self, model: Any, tokenizer: Any = None) -> Any:
        """Prepares a loaded model for training; returns the model to train. ``tokenizer``
        is the model's (e.g. to look up the ids a loss term reads)."""
        return model

    def prepare_data(
        self,
        documents: Any,
        tokenizer: Any,
        model: Any,
        *,
        max_length: int | None = None,
        original: Any = None,
    ) -> str | None:
        """Reads the training corpus before training (e.g. a loss term's example sentences).

        Args:
            documents: The corpus's document texts, original (not CDS-substituted), an
                iterable read once and lazily (a stream is read only as far as needed).
            tokenizer: The model's tokenizer.
            model: The prepared model (:meth:`prepare`).
            max_length: The longest input the model takes (special tokens included).
            original: None, or when ``model`` is not the run's original model (a resumed
                run loaded its checkpoint's weights) a function returning the original
                (loaded again from ``model_name_or_path``), e.g. for a term that compares
                with it.

        Returns:
            A line for the run's log (e.g. the memory a frozen copy takes), or None.
        """
        return None

    def mlm_weight(self) -> float:
        """``loss`` role: the weight of the masked-LM loss beside :meth:`loss_terms`."""
        return 1.0

    def save(self, model: Any, folder: Path) -> None:
        """Writes the files the Trainer does not save itself into a checkpoint or the output
        folder (called on the main process after every save and at the end)."""

    def callbacks(self) -> list[Any]:
        """Further ``transformers.TrainerCallback``\\ s the method needs."""
        return []

    def scoring_model(self, model: Any) -> Any:
        """The model the scorer reads while training (a wrapper's inner model)."""
        return model

    def loss_terms(self, model: Any, inputs: Mapping[str, Any], outputs: Any) -> dict[str, Any]:
        """``loss`` role: named scalar tensors added to the MLM loss in ``compute_loss``
        (each is logged under its name). The Trainer calls it with the batch and the
        model's outputs (``output_hidden_states=True``)."""
        return {}

    def after_training(self, model: Any, context: PosthocContext) -> Any:
        """``posthoc`` role: acts on the trained model (e.g. fits a projection and folds it
        into the MLM head); returns the model to score and save. ``context`` gives what
        the step may read: the corpus, the batched scorer of the model, the run folder."""
        return model

    def check_benchmarks(self, benchmarks: list[Any]) -> None:
        """Refuses benchmarks the method cannot be scored on (raise ``CdsbiasError``),
        checked when the recipe is read."""

    def wrap_scorer(self, scorer: Any) -> Any:
        """``posthoc`` role acting at scoring time (a decoding rule): returns the scorer
        the benchmarks use."""
        return scorer

    # ------------------------------------------------------------------ describing
    def label(self, model: Any = None) -> str:
        """A short description for ``cdsbias compare`` (``model``: the prepared model,
        when the label depends on it)."""
        return self.title

    def card_text(self) -> str:
        """The model card's sentence on what this method did."""
        return self.description

    def read_run(self, folder: Path) -> None:
        """Reads what this method recorded in a finished run's ``folder`` (e.g. a post-hoc
        fit's sentences and rank) so that :meth:`card_text` can state it; nothing by
        default."""

    def costs(self, model: Any = None, tokenizer: Any = None) -> dict[str, str]:
        """What the method costs beyond training, ``{column: text}`` (e.g. ``"inference
        cost": "2 forward passes, +14 tokens per prediction"``): ``run_info.json`` records
        it and ``cdsbias compare`` shows one column per name."""
        return {}

    # ------------------------------------------------------------------ saved folders
    @classmethod
    def files(cls) -> tuple[str, ...]:
        """Files the method adds to a run folder and its checkpoints, config first; ``()``
        when checkpoints hold plain full weights."""
        return ()

    @classmethod
    def holds(cls, folder: Path) -> bool:
        """Whether ``folder`` holds what this method saves (identified by its first file)."""
        files = cls.files()
        return bool(files) and (Path(folder) / files[0]).is_file()

    @classmethod
    def attaches(cls, folder: Path) -> bool:
        """Whether the first of :attr:`attached_files` in ``folder`` says this method acts on
        top of the model there; read before the other files are fetched from the hub. By
        default, that the file exists."""
        return bool(cls.attached_files) and (Path(folder) / cls.attached_files[0]).is_file()

    @classmethod
    def saved_config(cls, folder: Path) -> dict[str, Any]:
        """The settings a saved folder of this method holds (its first file, JSON)."""
        import json

        from cdsbias.errors import CdsbiasError

        path = Path(folder) / cls.files()[0]
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise CdsbiasError(f"{path} is not valid JSON: {exc}") from None

    @classmethod
    def saved_base(cls, folder: Path) -> str | None:
        """The model a saved folder of this method is loaded onto: the base its config
        names (``base_model_name_or_path``), or a folder of its own weights."""
        return cls.saved_config(folder).get("base_model_name_or_path") or None

    @classmethod
    def recorded_base(cls, folder: Path) -> str | None:
        """The base a saved folder's config names (training writes an absolute path)."""
        return cls.saved_config(folder).get("base_model_name_or_path") or None

    @classmethod
    def attach(cls, model: Any, folder: Path) -> Any:
        """Loads what ``folder`` saved onto ``model`` (its base); returns the model to score."""
        return model

    @classmethod
    def name_base(cls, folder: Path, base: str) -> dict[str, Any]:
        """The saved config of ``folder`` with its base named ``base`` (for publishing)."""
        return {**cls.saved_config(folder), "base_model_name_or_path": base}

    @classmethod
    def merge(cls, model: Any, folder: Path) -> Any:
        """``mergeable`` methods: the base ``model`` with what ``folder`` saved folded into
        its weights (a plain model that ``from_pretrained`` loads)."""
        raise NotImplementedError(f"{cls.name} cannot be merged")

    @classmethod
    def usage(cls, repo_id: str, base: str | None, tokenizer_from: str | None) -> list[str]:
        """The model card's "How to use" text and code for a published adapter; for a
        method with :attr:`attached_files`, lines of Python that continue the card's
        loading code (``model`` is loaded) and attach it."""
        return []


def register(cls: type[Method]) -> type[Method]:
    """Class decorator adding a method to :data:`REGISTRY` under ``cls.name``."""
    if cls.role not in ROLES:
        raise ValueError(f"Method '{cls.name}' has role '{cls.role}', not one of {ROLES}.")
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"Method name '{cls.name}' is registered twice.")
    REGISTRY[cls.name] = cls
    return cls


def get_method(name: str) -> type[Method]:
    """Looks a method up by name; a miss says what was meant and what exists."""
    from cdsbias.methods import load_all

    load_all()
    if name not in REGISTRY:
        raise unknown_name_error("debiasing method", name, REGISTRY)
    return REGISTRY[name]
