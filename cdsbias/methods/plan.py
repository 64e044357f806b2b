"""How methods combine into one run: a :class:`MethodPlan` built from recipe values.

A run has exactly one way of choosing what trains (role ``weights``: full, partial,
LoRA, adapter), any regularizers (dropout), at most one loss term and at most one
post-hoc step. The plan applies them in that order and describes the combination for
``run_info.json``, ``cdsbias compare`` and the model card. Plans are built from recipe
values, so a finished run's plan is rebuilt from its effective ``recipe.yaml`` exactly
as it trained (never re-defaulted).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.methods.base import REGISTRY, Method, PosthocContext
from cdsbias.methods.selection import (
    ERASURE_KEYS,
    LossSelection,
    MethodSelection,
    PosthocSelection,
)


def option_classes() -> tuple[type, ...]:
    """Every recipe dataclass of the methods: the selections and each method's options."""
    from cdsbias.methods import load_all

    load_all()
    classes: list[type] = [MethodSelection, LossSelection, PosthocSelection]
    for cls in REGISTRY.values():
        if cls.option_keys() and cls.Options not in classes:
            classes.append(cls.Options)
    return tuple(classes)


def option_keys() -> set[str]:
    """Every recipe key a method declares (the selection key included)."""
    import dataclasses

    return {f.name for cls in option_classes() for f in dataclasses.fields(cls)}


@dataclass
class MethodPlan:
    """The methods of one run, by role."""

    weights: Method
    regularizers: tuple[Method, ...] = ()
    loss: Method | None = None
    posthoc: Method | None = None
    #: Train nothing: score, apply the post-hoc method, score (``posthoc_only: true``).
    posthoc_only: bool = False

    @property
    def methods(self) -> list[Method]:
        """Every method that acts, in the order they act."""
        rest = [m for m in (self.loss, self.posthoc) if m is not None]
        return [self.weights, *self.regularizers, *rest]

    def acted(self, *, posthoc: bool = True) -> list[Method]:
        """The methods that acted on a saved model, for its card: every method, less the
        ``weights`` method of a ``posthoc_only`` run (nothing trained), and less the post-hoc
        method when ``posthoc`` is false (a checkpoint saved before it acted)."""
        trained = [] if self.posthoc_only else self.methods
        trained = [m for m in trained if m is not self.posthoc]
        return [*trained, self.posthoc] if posthoc and self.posthoc is not None else trained

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.methods]

    def check(self, *, init_from_scratch: bool) -> None:
        for method in self.methods:
            method.check(init_from_scratch=init_from_scratch)
        posthoc = self.posthoc
        if posthoc is not None and posthoc.edits_weights and self.weights.publishes != "weights":
            raise CdsbiasError(
                f"{posthoc.title} ({posthoc.selected_by}) changes the model's weights after "
                f"training, but a {self.weights.title} run saves only its own files; use "
                "posthoc_apply: hook, or train full weights."
            )

    def use_axis(self, axis: Any) -> None:
        """Every method acts on the bias axis ``axis`` (:meth:`Method.use_axis`; a method
        that cannot is a one-line error)."""
        for method in self.methods:
            method.use_axis(axis)

    def config_overrides(self, model_type: str) -> dict[str, Any]:
        """Config values every method loads the model with."""
        overrides: dict[str, Any] = {}
        for method in self.methods:
            overrides.update(method.config_overrides(model_type))
        return overrides

    def prepare(self, model: Any, tokenizer: Any = None) -> Any:
        """The loaded model, prepared for training by each method in turn."""
        for method in self.methods:
            model = method.prepare(model, tokenizer)
        return model

    def prepare_data(
        self,
        documents: Any,
        tokenizer: Any,
        model: Any,
        *,
        max_length: int | None = None,
        original: Any = None,
    ) -> list[str]:
        """Lets the methods read the corpus before training; returns their log lines
        (``original``: see :meth:`Method.prepare_data`)."""
        notes = [
            method.prepare_data(
                documents, tokenizer, model, max_length=max_length, original=original
            )
            for method in self.methods
        ]
        return [note for note in notes if note]

    @property
    def reads_corpus(self) -> bool:
        """Whether a method overrides :meth:`Method.prepare_data` (the corpus is read)."""
        return any(type(m).prepare_data is not Method.prepare_data for m in self.methods)

    def mlm_weight(self) -> float:
        """The weight of the masked-LM loss (the loss method's; 1 without one)."""
        return self.loss.mlm_weight() if self.loss is not None else 1.0

    def after_training(self, model: Any, context: PosthocContext) -> Any:
        """The model after the post-hoc method acted (the model itself without one)."""
        return self.posthoc.after_training(model, context) if self.posthoc else model

    def wrap_scorer(self, scorer: Any) -> Any:
        """The scorer of the post-hoc point (a decoding rule's; the scorer without one)."""
        return self.posthoc.wrap_scorer(scorer) if self.posthoc else scorer

    def check_benchmarks(self, benchmarks: list[Any]) -> None:
        """Every method's :meth:`Method.check_benchmarks`."""
        for method in self.methods:
            method.check_benchmarks(benchmarks)

    @property
    def changes_scoring(self) -> bool:
        """Whether the post-hoc method changes what the scorer reads (see
        :attr:`Method.changes_scoring`)."""
        return self.posthoc is not None and self.posthoc.changes_scoring

    def costs(self, model: Any = None, tokenizer: Any = None) -> dict[str, str]:
        """Every method's :meth:`Method.costs`."""
        out: dict[str, str] = {}
        for method in self.methods:
            out.update(method.costs(model, tokenizer))
        return out

    def save(self, model: Any, folder: Path) -> None:
        """Writes every method's own files into ``folder``."""
        for method in self.methods:
            method.save(model, folder)

    def callbacks(self) -> list[Any]:
        return [callback for method in self.methods for callback in method.callbacks()]

    def scoring_model(self, model: Any) -> Any:
        """The model the scorer reads during training (e.g. the one a peft wrapper holds)."""
        return self.weights.scoring_model(model)

    def label(self, model: Any = None) -> str:
        """``LoRA r=8 (query, value) + dropout 0.20/0.15``; ``INLP (fold), no training``
        for a ``posthoc_only`` run."""
        if self.posthoc_only and self.posthoc is not None:
            return f"{self.posthoc.label(model)}, no training"
        return " + ".join(m.label(model) for m in self.methods)

    def summary(self, model: Any, tokenizer: Any = None) -> dict[str, Any]:
        """What ``run_info.json["method"]`` records: the methods with their options, the
        label, the parameter counts and the methods' costs.

        ``total_parameters`` counts every tensor of the model to train once (adapters
        included, tied weights once); ``trainable_parameters`` those that require gradients
        (none in a ``posthoc_only`` run, which trains nothing).
        """
        params = list(model.parameters())  # shared tensors are listed once
        total = sum(p.numel() for p in params)
        trainable = 0 if self.posthoc_only else sum(p.numel() for p in params if p.requires_grad)
        summary = {
            "methods": self.names,
            "options": {m.name: m.option_values() for m in self.methods},
            "label": self.label(model),
            "trainable_parameters": trainable,
            "total_parameters": total,
            "trainable_share": trainable / total if total else 0.0,
        }
        costs = self.costs(model, tokenizer)
        if costs:
            summary["costs"] = costs
        return summary

    def unused_keys(self) -> set[str]:
        """Method keys that did not shape the run (left out of its model card), the shared
        keys of a fitted projection included when none was fitted."""
        used = {key for m in self.methods for key in m.option_keys()}
        unused = {key for cls in REGISTRY.values() for key in cls.option_keys()} - used
        chosen = self.posthoc.name if self.posthoc is not None else None
        return unused | {key for key, owners in ERASURE_KEYS.items() if chosen not in owners}

    def card_tags(self, *, posthoc: bool = True) -> list[str]:
        """The hub tags of the methods that acted (see :meth:`acted`)."""
        return [tag for m in self.acted(posthoc=posthoc) for tag in m.card_tags]

    def citations(self, *, posthoc: bool = True) -> list[str]:
        """The papers of the methods that acted (see :meth:`acted`)."""
        return [m.citation for m in self.acted(posthoc=posthoc) if m.citation]

    def read_run(self, folder: Path) -> None:
        """Lets each method read what it recorded in a finished run's ``folder`` (for its
        card, :meth:`Method.read_run`)."""
        for method in self.methods:
            method.read_run(folder)


def _selected(values: Mapping[str, Any], role: str) -> list[type[Method]]:
    return [cls for cls in REGISTRY.values() if cls.role == role and cls.is_selected(values)]


def plan_from_values(
    values: Mapping[str, Any],
    *,
    given: Mapping[str, Any] | None = None,
    init_from_scratch: bool = False,
) -> MethodPlan:
    """The plan of a recipe.

    Args:
        values: Recipe values (a parsed recipe's, or a finished run's ``recipe.yaml``);
            absent keys take the methods' defaults.
        given: The keys the user wrote; a key of a method that is not selected is an
            error (never dropped silently). None: not checked (reading a finished run).
        init_from_scratch: Whether the model is built from scratch (adapters refuse it).

    The methods act on the bias axis ``bias_axis`` of ``values`` (a finished run's recipe),
    else of ``given`` (the keys the user wrote), else gender (:meth:`MethodPlan.use_axis`).

    Raises:
        CdsbiasError: Two ways of training chosen, a key of an unselected method, a bad
            option value, or a method that cannot act on this run.
    """
    from cdsbias.methods import load_all

    load_all()
    weights = _selected(values, "weights")
    if len(weights) > 1:
        chosen = "; ".join(f"{cls.title} ({cls.selected_by})" for cls in weights)
        raise CdsbiasError(
            f"The recipe chooses two ways of training: {chosen}. A run trains one way "
            "(with LoRA or an adapter only the adapter trains). Remove one of them."
        )
    weights_cls = weights[0] if weights else REGISTRY["full"]
    chosen_classes = [weights_cls, *_selected(values, "regularizer")]
    for role in ("loss", "posthoc"):
        extra = _selected(values, role)
        if len(extra) > 1:
            # The keys the user wrote (self_debias: true), not the registry names.
            chosen = "; ".join(f"{cls.title} ({cls.selected_by})" for cls in extra)
            raise CdsbiasError(
                f"A run has at most one {role} method; the recipe selects {chosen}. "
                "Remove all but one."
            )
        chosen_classes += extra
    for key, selection in (("debias_loss", LossSelection), ("posthoc_method", PosthocSelection)):
        if values.get(key) is not None:  # an unknown name: did-you-mean, before other checks
            selection(**{key: values[key]})
    if given is not None:
        _check_unused_keys(chosen_classes, given)
        chosen = values.get("posthoc_method", "none")
        for key, owners in ERASURE_KEYS.items():
            if given.get(key) is not None and chosen not in owners:
                raise CdsbiasError(
                    f"{key} applies only to posthoc_method: {' | '.join(owners)}, which this "
                    "recipe does not choose; remove it or choose one of them."
                )
    for selection in (LossSelection, PosthocSelection):  # the other values' checks
        keys = [f.name for f in dataclasses.fields(selection)]
        selection(**{key: values[key] for key in keys if values.get(key) is not None})
    methods = [cls.from_values(values) for cls in chosen_classes]
    by_role = {m.role: m for m in methods if m.role in ("loss", "posthoc")}
    plan = MethodPlan(
        weights=methods[0],
        regularizers=tuple(m for m in methods if m.role == "regularizer"),
        loss=by_role.get("loss"),
        posthoc=by_role.get("posthoc"),
        posthoc_only=bool(values.get("posthoc_only", False)),
    )
    if plan.posthoc_only:
        _check_posthoc_only(plan)
    plan.check(init_from_scratch=init_from_scratch)
    reference = values.get("bias_axis") or (given or {}).get("bias_axis")
    if reference is not None:
        from cdsbias.axes import get_axis

        try:
            axis = get_axis(reference)
        except CdsbiasError as exc:
            if given is not None:
                raise
            # A finished run whose attribute file has moved: its fit is recorded
            # (posthoc_fit.json) and a prefix-less axis's Self-Debias prefix is in the recipe,
            # so the run still loads; only what names the axis loses it.
            warnings.warn(
                f"The run's bias_axis cannot be read ({exc}); its recorded fit and prefix are "
                "used, but labels name no axis. Put the attribute file back at that path to "
                "restore them.",
                stacklevel=2,
            )
            axis = None
        if axis is not None:
            plan.use_axis(axis)
    return plan


def _check_posthoc_only(plan: MethodPlan) -> None:
    if plan.posthoc is None:
        posthoc = [cls.selected_by for cls in REGISTRY.values() if cls.role == "posthoc"]
        raise CdsbiasError(
            "posthoc_only: true trains nothing and applies a post-hoc method, but the recipe "
            f"chooses none; choose one ({', '.join(sorted(posthoc))}) or drop posthoc_only."
        )
    training = [m for m in (plan.weights, *plan.regularizers, plan.loss) if m is not None]
    training = [m for m in training if m is not plan.weights or m.name != "full"]
    if training:
        chosen = ", ".join(f"{m.title} ({m.selected_by})" for m in training)
        raise CdsbiasError(
            f"posthoc_only: true trains nothing, but the recipe also chooses {chosen}; "
            "remove it, or drop posthoc_only to train first."
        )


def _check_unused_keys(chosen: list[type[Method]], given: Mapping[str, Any]) -> None:
    for cls in REGISTRY.values():
        if cls in chosen:
            continue
        keys = [key for key in cls.option_keys() if given.get(key) is not None]
        if keys:
            one = len(keys) == 1
            raise CdsbiasError(
                f"{', '.join(keys)} {'applies' if one else 'apply'} only to {cls.selected_by} "
                f"({cls.title}), which this recipe does not choose; remove "
                f"{'it' if one else 'them'} or choose {cls.selected_by}."
            )


def saved_method(folder: str | Path) -> type[Method] | None:
    """The method whose saved files ``folder`` holds (an adapter), or None (full weights)."""

    for cls in saved_methods():
        if cls.holds(Path(folder)):
            return cls
    return None


def saved_methods() -> list[type[Method]]:
    """The methods that save files of their own instead of full weights."""
    from cdsbias.methods import load_all

    load_all()
    return [cls for cls in REGISTRY.values() if cls.files()]


def attaching_methods(files: tuple[str, ...] | None = None) -> list[type[Method]]:
    """The methods with files to attach on top of a loaded model
    (:attr:`Method.attached_files`; ``files``: those files exactly)."""
    from cdsbias.methods import load_all

    load_all()
    return [
        cls
        for cls in REGISTRY.values()
        if cls.attached_files and (files is None or cls.attached_files == files)
    ]


def attached_methods(folder: str | Path) -> list[type[Method]]:
    """The methods to attach on top of the model ``folder`` holds (e.g. a forward hook a
    ``posthoc_apply: hook`` run saved beside its weights; see :attr:`Method.attached_files`)."""
    folder = Path(folder)
    return [cls for cls in attaching_methods() if cls.holds(folder)]
