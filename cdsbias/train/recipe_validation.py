"""Checks of a parsed recipe that span keys or sections, before any work starts.

:func:`cdsbias.train.config.load_recipe` has already refused unknown keys and values of
the wrong type; what is left are ranges, choices, keys that conflict (a named model with
``init_from_scratch``), keys that do not apply (warned), the corpus keys (through
:func:`cdsbias.data.corpora.validate_corpus`), the CDS language and the benchmarks'
options, so that a bad recipe fails in one line before a model is loaded.
"""

from __future__ import annotations

import warnings
from typing import Any

from cdsbias.cds.languages import language_class
from cdsbias.data.corpora import validate_corpus
from cdsbias.data.occupations import LANGUAGES as OCCUPATION_LANGUAGES
from cdsbias.errors import CdsbiasError
from cdsbias.runs.card_recipe import SCRATCH_KEYS


def validate_recipe(recipe: Any, command_line: dict[str, Any]) -> None:
    """Raises on the first problem of ``recipe``; warns about keys that do not apply.

    Args:
        recipe: The parsed recipe.
        command_line: The ``key=value`` overrides, to say where a conflicting key was set.

    Raises:
        CdsbiasError: One readable line naming the key and the fix.
    """
    data, cds, model = recipe.data, recipe.cds, recipe.model
    validate_corpus(data, recipe.source)
    if data.streaming and (recipe.training.max_steps or 0) <= 0:
        raise CdsbiasError(
            "streaming: true needs max_steps (a stream has no length, so epochs cannot be "
            "counted); set e.g. max_steps=10000."
        )
    if data.text_unit not in ("sentence", "chunk"):
        raise CdsbiasError(f"text_unit must be 'sentence' or 'chunk', got '{data.text_unit}'.")
    if not 0.0 <= data.heldout_fraction < 1.0:
        raise CdsbiasError(f"heldout_fraction must be in [0, 1), got {data.heldout_fraction}.")
    if not 0.0 < data.mlm_probability < 1.0:
        raise CdsbiasError(f"mlm_probability must be in (0, 1), got {data.mlm_probability}.")
    if cds.cds_mode not in ("cds", "cda", "none"):
        raise CdsbiasError(f"cds_mode must be cds, cda or none, got '{cds.cds_mode}'.")
    if not 0.0 <= cds.cds_probability <= 1.0:
        raise CdsbiasError(f"cds_probability must be in [0, 1], got {cds.cds_probability}.")
    language_class(cds.cds_language)  # an unknown code: did-you-mean, before any work
    validate_axis_cds(recipe)
    cds.forms().validate(cds.cds_language)
    if not cds.cds_agreement and cds.cds_language != "de":
        raise CdsbiasError(
            f"cds_agreement: false is German's naive variant; cds_language is "
            f"'{cds.cds_language}'. Drop cds_agreement or set cds_language: de."
        )
    if "occupations" in data.dataset:
        if data.occupation_language not in OCCUPATION_LANGUAGES:
            raise CdsbiasError(
                f"occupation_language '{data.occupation_language}' has no occupational "
                f"corpus; use one of {', '.join(OCCUPATION_LANGUAGES)}."
            )
        if cds.cds_mode != "none" and data.occupation_language != cds.cds_language:
            raise CdsbiasError(
                f"occupation_language is '{data.occupation_language}' but cds_language is "
                f"'{cds.cds_language}': the corpus would be swapped with another language's "
                f"rules; set both to the same language."
            )
    if not model.init_from_scratch and not model.model_name_or_path:
        raise CdsbiasError("Set model_name_or_path, or init_from_scratch: true.")
    if model.init_from_scratch and "model_name_or_path" in recipe.source:
        # Never resolve this silently: the user named a model and would get a random BERT.
        where = "on the command line" if "model_name_or_path" in command_line else "in the recipe"
        raise CdsbiasError(
            f"model_name_or_path={recipe.source['model_name_or_path']} ({where}) conflicts with "
            "init_from_scratch: true, which builds a new random BERT and ignores it. To "
            "fine-tune that model add init_from_scratch=false; to train from scratch drop "
            "model_name_or_path."
        )
    unused = [k for k in SCRATCH_KEYS if k in recipe.source]
    if unused and not model.init_from_scratch:
        warnings.warn(
            f"{', '.join(unused)} only shape a from-scratch model (init_from_scratch: true) and "
            f"are ignored when fine-tuning {model.model_name_or_path}; remove them.",
            stacklevel=3,
        )
    recipe.method.check_benchmarks(recipe.bias.build_benchmarks(recipe.axis))


def validate_axis_cds(recipe: Any) -> None:
    """Checks the CDS keys against ``bias_axis`` and fills in the n-ary default mode.

    An axis other than gender defaults to ``cds_mode: cda`` (bias-bench's augmentation)
    when the recipe does not set ``cds_mode``, and an axis without counterfactuals
    (``BiasAxis.cds_refused``) to ``none`` and refuses any other; the corpus language must
    have the axis (``Language.axes``); gender-only keys and ``cds_counterfactuals`` are
    refused where they do not apply.

    Raises:
        CdsbiasError: One line naming the key and the fix.
    """
    from cdsbias.cds.axis_corpus import COUNTERFACTUALS, is_gender

    cds = recipe.cds
    axis = recipe.axis.axis()
    if cds.cds_counterfactuals not in COUNTERFACTUALS:
        raise CdsbiasError(
            f"cds_counterfactuals must be one of {', '.join(COUNTERFACTUALS)}, got "
            f"'{cds.cds_counterfactuals}'."
        )
    if is_gender(recipe.axis.bias_axis):
        if cds.cds_counterfactuals != "one":
            raise CdsbiasError(
                "cds_counterfactuals applies to axes of more than two groups (bias_axis: "
                "race, religion or a file); gender's counterfactual is its one swap. Drop it."
            )
        return
    if axis.cds_refused is not None:  # no counterfactuals: no corpus treatment by default
        if "cds_mode" not in recipe.source:
            cds.cds_mode = "none"
        if cds.cds_mode != "none":
            from cdsbias.methods import check_counterfactuals

            check_counterfactuals(axis)
        return
    axis.check_language(cds.cds_language, language_class(cds.cds_language).axes)
    if "cds_mode" not in recipe.source:
        cds.cds_mode = "cda"  # bias-bench's n-ary CDA is the default off gender
    gender_only = [
        key
        for key, default in (("gender_forms", "binary"), ("cds_agreement", True))
        if getattr(cds, key) != default
    ]
    if gender_only and cds.cds_mode != "none":
        raise CdsbiasError(
            f"{', '.join(gender_only)} shape gender CDS; bias_axis is '{axis.name}'. Drop "
            f"{'it' if len(gender_only) == 1 else 'them'} or set bias_axis: gender."
        )
