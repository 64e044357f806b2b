"""Pronoun fidelity: does the model use the pronouns a person declared?

MISGENDERED's task (Hossain et al. 2023, "MISGENDERED: Limits of Large Language Models in
Understanding Pronouns", ACL 2023; data and code:
github.com/tamannahossainkay/misgendered-backend) for masked language models: a sentence
declares a person's pronoun family ("Casey's pronouns are xe/xem/xyr."), a later sentence
masks one of their pronouns, and the model picks among the forms *every* family of the
evaluation has for that case. By default those are every family of the data: the
generated set's six (cdsbias.cds.pronoun_families; nominative he, she, they, xe, ze, ey;
reflexive himself, herself, themself, xemself, hirself, emself; ...) or the eleven of the
released data's ``pronouns.csv``; option ``families`` narrows the set, e.g. for a
vocabulary that cannot spell *xe*::

    score(row, f)  = ln P(form_f(case) | sentence)      (chain rule for multi-piece forms)
    prediction     = argmax_f score(row, f)              (ties: the first family in order)
    correct        = [form_prediction(case) == form_declared(case)]
    accuracy       = mean over rows of correct
    accuracy_F     = the same over the rows declaring family F   (also per case and,
                     on the released data, per declaration type)
    misgendering   = share of rows declaring a non-binary family whose predicted form is
                     a binary family's (he's or she's)

Each proportion comes with a 95% Wilson score interval (rows taken as independent).
Forms are capitalised where the mask starts a sentence. A form the tokenizer splits into
pieces is scored by the chain rule, as everywhere in cdsbias, so neopronouns that are
several pieces start with a handicap: that is part of what the benchmark shows.

A row is right when the most probable candidate *form* is the declared family's form, as
MISGENDERED scores it (its top-1 word against the label): two families that share a form
in a case (the release's *e* and *ey* both have *em* and *emself*) are both right there, and
the summary lists such shared forms (``shared_forms``). Each row also records how many
tokenizer pieces its declared form takes (``pieces``), and the summary the pieces of every
candidate form, so a family scored at a piece handicap is visible, not hidden.

Rows: the generated set of cdsbias.benchmarks.pronoun_fidelity_data (15 templates x 6
names x 6 families = 540 rows), a template file (``--data``), or the released MISGENDERED
data (``--data`` at its folder, cdsbias.benchmarks.pronoun_fidelity_released: 12
declaration files x 50 templates x 500 names x 11 families; ``names_per_kind`` samples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cdsbias.benchmarks.base import Benchmark, Metric, register
from cdsbias.benchmarks.pronoun_fidelity_data import (
    NAMES,
    build_rows,
    generated_templates,
    read_names,
    read_templates,
)
from cdsbias.benchmarks.pronoun_fidelity_released import (
    load_release,
    read_families,
    release_root,
)
from cdsbias.benchmarks.results import BenchmarkResult, Snapshot, format_value
from cdsbias.benchmarks.stats import wilson_interval
from cdsbias.cds.pronoun_families import CASES, FAMILIES, PronounFamily
from cdsbias.errors import CdsbiasError, unknown_name_error
from cdsbias.scoring import MaskedLMScorer


@dataclass
class PronounFidelityOptions:
    """Options of the pronoun-fidelity benchmark."""

    families: list[str] | None = field(
        default=None,
        metadata={
            "help": "The families of the evaluation, each declared by its rows and each a "
            "candidate at every mask (default: every family of the data; the generated "
            "set's six are " + ", ".join(FAMILIES) + "; the released MISGENDERED data's "
            "are those of its pronouns.csv); leave out those a model's vocabulary cannot spell."
        },
    )
    names_per_kind: int = field(
        default=0,
        metadata={
            "help": "Released MISGENDERED data only: the first N names of each of its "
            "unisex, female and male lists (0: all 500, 3.3 million rows)",
            "min": 0,
        },
    )

    def __post_init__(self) -> None:
        # Names the generated set lacks are checked against the data's families at load.
        if self.families is not None and len(set(self.families)) != len(self.families):
            raise CdsbiasError("pronoun_fidelity option families names a family twice.")


def proportion(successes: int, total: int) -> dict[str, float]:
    """A share with its 95% Wilson interval: ``{value, ci_low, ci_high, n}``."""
    low, high = wilson_interval(successes, total)
    return {
        "value": successes / total if total else math.nan,
        "ci_low": low / 100,
        "ci_high": high / 100,
        "n": float(total),
    }


@register
class PronounFidelity(Benchmark):
    """Accuracy of filling a person's declared pronouns, and the misgendering rate."""

    name = "pronoun_fidelity"
    description = (
        "Pronoun fidelity (MISGENDERED): fill the declared pronoun family's form; accuracy "
        "per family and case, misgendering rate"
    )
    languages = ("en",)
    Options = PronounFidelityOptions
    headline = (
        Metric("accuracy", "accuracy, declared pronouns", "proportion", "higher", 1.0),
        Metric("accuracy_neutral", "accuracy, they and neopronouns", "proportion", "higher", 1.0),
        Metric(
            "misgendering_rate",
            "misgendering (he/she for another family)",
            "proportion",
            "lower",
            0.0,
        ),
    )
    curve_title = "pronoun fidelity (95% Wilson CI)"
    curve_ylabel = "proportion"
    hub_dataset = ("pronoun-fidelity", "Pronoun fidelity (cdsbias, MISGENDERED design)")
    citation = (
        "Hossain, T., Dev, S., & Singh, S. (2023). MISGENDERED: Limits of Large Language Models "
        "in Understanding Pronouns. ACL 2023."
    )
    undefined_reason = "no rows declare a family outside he and she"
    shard_column = "template_id"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # An unknown family fails here, before anything runs (the data's families are
        # known once its pronouns.csv is read).
        self.candidates()

    def _released(self) -> bool:
        return self.data_file is not None and release_root(self.data_file) is not None

    def candidates(self) -> dict[str, PronounFamily]:
        """The evaluated families by name: the data's, narrowed by option ``families``.

        Raises:
            CdsbiasError: An option family the data does not have (did-you-mean).
        """
        cached = getattr(self, "_candidates", None)
        if cached is not None:
            return cached
        if self._released():
            available = read_families(release_root(self.data_file) / "pronouns.csv")
        else:
            available = FAMILIES
        chosen = self.options.families or list(available)
        for name in chosen:
            if name not in available:
                raise unknown_name_error("pronoun family", str(name), available)
        self._candidates = {name: available[name] for name in chosen}
        return self._candidates

    def load(self) -> pd.DataFrame:
        if self._released():
            templates, names, _ = load_release(self.data_file, self.options.names_per_kind)
            families = list(self.candidates().values())
            rows = build_rows([(t.case, t.template) for t in templates], names, families)
            rows.insert(1, "declaration", [templates[i].declaration for i in rows["template_id"]])
            rows.insert(
                2, "release_template", [templates[i].release_template for i in rows["template_id"]]
            )
            return rows
        names = list(NAMES)
        if self.data_file is None:
            templates = generated_templates()
        else:
            path = self.data_file / "templates.tsv" if self.data_file.is_dir() else self.data_file
            templates = read_templates(path)
            if (path.parent / "names.tsv").is_file():
                names = read_names(path.parent / "names.tsv")
        return build_rows(templates, names, list(self.candidates()))

    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        sentences, targets = [], []
        families = list(self.candidates().values())
        for row in rows.itertuples(index=False):
            for family in families:
                sentences.append(row.sentence)
                targets.append(_written(family.form(row.case), row.capitalized))
        try:
            scores = scorer.target_log_probs(sentences, targets)
        except CdsbiasError as exc:
            if "unknown token" not in str(exc):
                raise
            raise CdsbiasError(
                f"{self.name}: {exc} Every family's forms must be writable, in pieces if need "
                "be: use a model whose vocabulary covers English text (not a toy vocabulary)."
            ) from None
        scores = scores.reshape(len(rows), len(families))
        out = rows.reset_index(drop=True).copy()
        for column, family in enumerate(families):
            out[f"log_prob_{family.name}"] = scores[:, column]
        by_name = {family.name: family for family in families}
        out["predicted"] = [families[i].name for i in np.argmax(scores, axis=1)]
        # MISGENDERED compares the top-1 word with the label: a shared form is right.
        out["correct"] = [
            by_name[p].form(c) == by_name[d].form(c)
            for p, d, c in zip(out["predicted"], out["declared"], out["case"], strict=True)
        ]
        out["pieces"] = _declared_pieces(scorer, out, by_name)
        return out

    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        families = self.candidates()
        binary = {name for name, family in families.items() if family.binary}
        binary_forms = {(case, families[name].form(case)) for name in binary for case in CASES}
        correct = scored["correct"].astype(bool)
        neutral = ~scored["declared"].isin(binary)
        predicted_form = [
            (case, families[p].form(case))
            for p, case in zip(scored["predicted"], scored["case"], strict=True)
        ]
        misgendered = neutral & pd.Series([f in binary_forms for f in predicted_form],
                                          index=scored.index)  # fmt: skip
        summary: dict[str, Any] = {
            "benchmark": self.name,
            "n_rows": len(scored),
            "accuracy": proportion(int(correct.sum()), len(scored)),
            "accuracy_neutral": proportion(int(correct[neutral].sum()), int(neutral.sum())),
            "misgendering_rate": proportion(int(misgendered.sum()), int(neutral.sum())),
            "families": {name: "/".join(family.forms) for name, family in families.items()},
            "shared_forms": shared_forms(families),
            "pieces": _pieces_table(scored),
            "per_family": {},
            "per_case": {},
            "per_declaration": {},
            "predicted_share": {},
        }
        for family in families:
            part = scored["declared"] == family
            if part.any():
                summary["per_family"][family] = proportion(
                    int(correct[part].sum()), int(part.sum())
                )
            summary["predicted_share"][family] = float((scored["predicted"] == family).mean())
        if "declaration" in scored.columns:
            for declaration, part in scored.groupby("declaration", sort=True).groups.items():
                summary["per_declaration"][declaration] = proportion(
                    int(correct[part].sum()), len(part)
                )
        for case in CASES:
            part = scored["case"] == case
            if part.any():
                summary["per_case"][case] = proportion(int(correct[part].sum()), int(part.sum()))
        metrics = {
            key: summary[key]["value"]
            for key in ("accuracy", "accuracy_neutral", "misgendering_rate")
        }
        for group in ("per_family", "per_case", "per_declaration"):
            for key, value in summary[group].items():
                metrics[f"accuracy_{key}"] = value["value"]
        return summary, metrics

    def curve(self, summary: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
        return {
            label: (summary[key]["value"], summary[key]["ci_low"], summary[key]["ci_high"])
            for key, label in (
                ("accuracy", "accuracy"),
                ("misgendering_rate", "misgendering rate"),
            )
        }

    def tracker_tables(self, result: BenchmarkResult) -> dict[str, tuple[list[str], list[list]]]:
        """One W&B table: accuracy and interval per declared family and per case."""
        summary = result.summary
        rows = [
            [group, key, value["value"], value["ci_low"], value["ci_high"], int(value["n"])]
            for group in ("per_family", "per_case", "per_declaration")
            for key, value in summary.get(group, {}).items()
        ]
        columns = ["group", "name", "accuracy", "ci_low", "ci_high", "n"]
        return {"pronoun_fidelity": (columns, rows)}

    def card_section(self, before: Snapshot | None, after: Snapshot) -> str:
        """The headline table, then accuracy per declared family before and after."""
        lines = [
            super().card_section(before, after),
            "",
            "| declared family | before | after |",
            "|---|---|---|",
        ]
        families = list((after.summary or {}).get("per_family", FAMILIES))
        for family in families:
            key = f"accuracy_{family}"
            if key in after.metrics:
                start = before.metrics.get(key) if before else None
                lines.append(
                    f"| {family} | {format_value(start)} | {format_value(after.metrics[key])} |"
                )
        lines.append(
            "\nA row is right when the model's most probable form among the evaluated families' "
            "forms for the masked case is the declared family's form (MISGENDERED, Hossain et al. "
            "2023); misgendering is *he* or *she* filled for a person who declared another "
            "family."
        )
        return "\n".join(lines)

    def format_report(self, summary: dict[str, Any]) -> str:
        def cell(value: dict[str, float]) -> str:
            interval = f"[{value['ci_low']:.3f}, {value['ci_high']:.3f}]"
            return f"{value['value']:.3f} {interval} (n={int(value['n'])})"

        lines = [
            f"pronoun fidelity ({summary['n_rows']} rows; 95% Wilson intervals)",
            f"  accuracy           {cell(summary['accuracy'])}",
            f"  accuracy, neutral  {cell(summary['accuracy_neutral'])}",
            f"  misgendering rate  {cell(summary['misgendering_rate'])}",
        ]
        groups = (("per_family", "declared family"), ("per_case", "case"),
                  ("per_declaration", "declaration"))  # fmt: skip
        for group, title in groups:
            if summary.get(group):
                lines.append(f"  by {title}:")
                lines += [f"    {key:<24}{cell(value)}" for key, value in summary[group].items()]
        for case, form, names in summary.get("shared_forms", []):
            lines.append(
                f"  {case} form '{form}' is shared by {', '.join(names)}: a fill of it is right "
                "for each, and they cannot be told apart there"
            )
        forms = {family: text.split("/") for family, text in summary.get("families", {}).items()}
        several = [
            f"{forms[family][CASES.index(case)]} ({n})"
            for family, cases in summary.get("pieces", {}).items()
            for case, n in cases.items()
            if n > 1 and family in forms
        ]
        if several:
            lines.append(
                "  forms scored in several pieces (chain rule): " + ", ".join(sorted(set(several)))
            )
        return "\n".join(lines)


def _written(form: str, capitalized: bool) -> str:
    """The form as the sentence writes it (capitalised at a sentence start)."""
    return form[:1].upper() + form[1:] if capitalized else form


def shared_forms(families: dict[str, PronounFamily]) -> list[tuple[str, str, list[str]]]:
    """``(case, form, families)`` wherever several families have the same form in a case."""
    out = []
    for case in CASES:
        owners: dict[str, list[str]] = {}
        for name, family in families.items():
            owners.setdefault(family.form(case), []).append(name)
        out += [(case, form, names) for form, names in owners.items() if len(names) > 1]
    return out


def _declared_pieces(
    scorer: MaskedLMScorer, rows: pd.DataFrame, families: dict[str, PronounFamily]
) -> list[int]:
    """Tokenizer pieces of each row's declared form, as written in its sentence."""
    cache: dict[tuple[str, int, str, bool], int] = {}
    out = []
    for row in rows.itertuples(index=False):
        form = _written(families[row.declared].form(row.case), row.capitalized)
        # The pieces of a form depend on its context, never on the name.
        key = (form, row.template_id, row.case, row.capitalized)
        if key not in cache:
            cache[key] = len(scorer.encode_target(row.sentence, form).target_ids)
        out.append(cache[key])
    return out


def _pieces_table(scored: pd.DataFrame) -> dict[str, dict[str, int]]:
    """``{family: {case: most pieces}}`` of each family's forms, from the rows declaring it."""
    table: dict[str, dict[str, int]] = {}
    if "pieces" not in scored.columns:
        return table
    for (family, case), part in scored.groupby(["declared", "case"], sort=False)["pieces"]:
        table.setdefault(family, {})[case] = int(part.max())
    return table
