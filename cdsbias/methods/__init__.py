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
