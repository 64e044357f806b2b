"""Debiasing methods: one module per method behind one interface (:mod:`.base`), combined
per run by a :class:`~cdsbias.methods.plan.MethodPlan`.

=========== =========== ===================================================== ==========
name        role        what it does                                           module
=========== =========== ===================================================== ==========
``full``    weights     every weight trains (the default)                      full.py
``partial`` weights     only ``trainable_parameters`` globs train              partial.py
``lora``    weights     peft LoRA (Hu et al. 2022), base frozen                lora.py
``adapter`` weights     bottleneck adapters (ADELE), base frozen               adapter.py
``dropout`` regularizer higher training dropout (Webster et al. 2020)          dropout.py
``context_debias`` loss  Context-Debias term (Kaneko & Bollegala 2021)      context_debias.py
``self_debiasing`` posthoc Self-Debias decoding rule (Schick et al. 2021)   self_debias.py
``sentence_debias`` posthoc SentenceDebias projection (Liang et al. 2020) sentence_debias.py
``inlp``    posthoc     INLP nullspace projection (Ravfogel et al. 2020)       inlp.py
``leace``   posthoc     LEACE closed-form erasure (Belrose et al. 2023)        leace.py
=========== =========== ===================================================== ==========

What acts on the *data* (CDS, CDA, original text) is the corpus's business
(:mod:`cdsbias.cds.treatment`), not a method's.
"""

from __future__ import annotations

import importlib
import pkgutil

from cdsbias.methods.base import (
    REGISTRY,
    ROLES,
    Method,
    NoOptions,
    PosthocContext,
    Role,
    get_method,
    register,
)
from cdsbias.methods.plan import (
    LossSelection,
    MethodPlan,
    MethodSelection,
    PosthocSelection,
    attached_methods,
    attaching_methods,
    option_classes,
    option_keys,
    plan_from_values,
    saved_method,
    saved_methods,
)

#: Modules of this package that hold no method.
_NOT_METHODS = {
    "base", "plan", "selection", "bottleneck", "context_debias_loss", "context_debias_data",
    "erasure", "fit_sentences", "head_fold", "posthoc_erasure",
}  # fmt: skip


def load_all() -> None:
    """Imports every method module, registering its method (idempotent, cheap after once)."""
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _NOT_METHODS and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def list_methods() -> dict[str, str]:
    """``{name: description}`` of every registered method."""
    load_all()
    return {name: REGISTRY[name].description for name in sorted(REGISTRY)}


def axis_methods(axis: object) -> list[str]:
    """``"Title (how a recipe selects it)"`` of every method that acts on ``axis`` (a
    :class:`~cdsbias.axes.BiasAxis` or its reference), for errors that name what does apply
    (CDS refused on an axis without counterfactuals). A method that reads the axis acts on
    it when its :meth:`~cdsbias.methods.base.Method.check_axis` passes with its defaults
    (Self-Debias needs the axis's prefix)."""
    from cdsbias.axes import get_axis
    from cdsbias.errors import CdsbiasError

    load_all()
    axis = get_axis(axis)  # type: ignore[arg-type]
    found = []
    for name in sorted(REGISTRY, key=lambda n: (REGISTRY[n].role != "posthoc", n)):
        cls = REGISTRY[name]
        if not cls.reads_axis:
            continue
        try:
            cls().use_axis(axis)
        except CdsbiasError:
            continue
        found.append(f"{cls.title} ({cls.selected_by})")
    return found


def check_counterfactuals(axis: object) -> None:
    """Raises the one-line error of CDS/CDA asked for an axis without counterfactuals,
    naming the methods that do act on it (:func:`axis_methods`)."""
    from cdsbias.axes import get_axis

    axis = get_axis(axis)  # type: ignore[arg-type]
    if axis.cds_refused is not None:
        axis.check_counterfactuals(", ".join(axis_methods(axis)))


__all__ = [
    "REGISTRY",
    "ROLES",
    "LossSelection",
    "Method",
    "MethodPlan",
    "MethodSelection",
    "NoOptions",
    "PosthocContext",
    "PosthocSelection",
    "Role",
    "attached_methods",
    "attaching_methods",
    "axis_methods",
    "check_counterfactuals",
    "get_method",
    "list_methods",
    "load_all",
    "option_classes",
    "option_keys",
    "plan_from_values",
    "register",
    "saved_method",
    "saved_methods",
]
