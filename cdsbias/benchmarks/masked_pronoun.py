"""The masked-pronoun task shared by WinoBias and DaWinoBias (GenDa Lens procedure).

A sentence exists in a pro-stereotypical version ("[The developer] argued with the designer
because [he] did not like the design.") and an anti-stereotypical one ("... because [she]
..."). Following the DaWinoBias language-modelling task of GenDa Lens, the gold pronoun is
replaced by one mask and the model's guess is compared with it, grouped by gender. Two
guesses are scored from the same forward pass:

* ``top1`` (GenDa Lens): the model's most probable token over the *whole vocabulary*,
  decoded; it counts as female or male if it is one of the inventory's female or male
  pronouns and as ``UNK`` (always wrong) otherwise.
* ``choice``: a forced choice between the genders, restricted to the pronouns that fit the
  gold pronoun's grammatical slot: ``P(female forms)`` vs ``P(male forms)`` summed over
  the slot's forms. English "her" is both object and possessive, so the slot
  object/possessive compares {her} with {him, his}; subject {she} vs {he}; "hers" vs "his";
  "herself" vs "himself". (Danish has a form per slot: hun/han, hende/ham, hendes/hans.)
  Multi-piece forms get a chain-rule probability with one mask per piece.

Metrics per condition (pro, anti), with the sklearn ``classification_report`` conventions
GenDa Lens uses (``zero_division=1``: a class never predicted gets precision 1, a class
absent from the gold labels recall 1, and F1 = 1 only when both are empty)::

    accuracy   = mean(prediction == gold gender)          (UNK counts as wrong)
    F1_g       = 2 TP_g / (2 TP_g + FP_g + FN_g)          for g in {female, male}
    macro_F1   = (F1_female + F1_male) / 2
    gender_effect    = log2(accuracy_pro / accuracy_anti)   (GenDa Lens code)
    gender_effect_f1 = log2(macro_F1_pro / macro_F1_anti)   (GenDa Lens docs)

The per-pronoun-gender F1 scores are GenDa Lens' "nuance". GenDa Lens' documentation
(``docs/user_guide/lm.md``) says the main effect is computed from F1 scores, but its code
(``evaluate_lm_winobias``) takes the log-ratio of *accuracies*, after rounding them to two
decimals, and rounds the result to two decimals; both are reported here, unrounded, plus
``gender_effect_genda_rounded`` reproducing the rounding (the log2 ratios and their
NaN policy: :mod:`cdsbias.benchmarks.stats`).

WinoBias text quirks handled by the parser: leading line numbers, stray spaces inside
brackets ("[ physician]") and between words, CRLF/LF line endings, lines with several
bracketed pronouns (the first is masked; the others stay visible), and lines whose pronoun
is not bracketed (it is found as a whole word, and the row is flagged).

This module holds the pronoun inventory type, the parser, the scoring and the metrics;
:mod:`cdsbias.benchmarks.winobias` (English) and :mod:`cdsbias.benchmarks.dawinobias`
(Danish) add their inventories and data files. It registers no benchmark.

Reference: Thea Rolskov Sloth, Astrid Sletten Rybner (2023). GenDa Lens
(https://github.com/DaDebias/genda-lens), ``genda_lens/lm_tasks/wino_utils.py``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from cdsbias.benchmarks.base import Benchmark, Metric
from cdsbias.benchmarks.masked_pronoun_data import (
    CONDITIONS,
    FEMALE,
    MALE,
    PREDICTIONS,
    UNKNOWN,
    PronounInventory,
)
from cdsbias.benchmarks.stats import genda_rounded_log2_ratio, log2_ratio
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.readouts import chain_rule_requests, decode_token, log_probs_and_top_k


# --------------------------------------------------------------------------- scoring
def _cased(form: str, capitalized: bool) -> str:
    return form[:1].upper() + form[1:] if capitalized else form


def check_vocabulary(
    scorer: MaskedLMScorer,
    rows: pd.DataFrame,
    inventory: PronounInventory,
    name: str,
    hint: str,
) -> None:
    """Errors on a pronoun the tokenizer cannot represent; warns on multi-piece pronouns.

    A pronoun that maps to the unknown token cannot be scored at all (error naming it);
    pronouns that split into several pieces are a sign of a model for another language
    (warning with ``hint``), since the model can then never predict them as one token.
    """
    split: list[str] = []
    sample = rows["masked"].iloc[0]
    used_slots = set(rows["slot"])
    for slot in inventory.slots:
        if slot not in used_slots:
            continue
        female, male = inventory.slots[slot]
        for form in (*female, *male):
            try:
                encoded = scorer.encode_target(sample, form)
            except CdsbiasError as exc:
                raise CdsbiasError(
                    f"{name}: the pronoun {form!r} is not in this model's vocabulary ({exc}) {hint}"
                ) from exc
            if len(encoded.target_ids) > 1 and form not in split:
                split.append(form)
    if split:
        quoted = ", ".join(repr(f) for f in split)
        warnings.warn(
            f"{name}: this model has no single token for the pronoun(s) {quoted}, so its "
            f"top-1 prediction can never be them. {hint}",
            stacklevel=2,
        )


def score_rows(
    scorer: MaskedLMScorer,
    rows: pd.DataFrame,
    inventory: PronounInventory,
    *,
    case_sensitive: bool,
) -> pd.DataFrame:
    """Adds the top-1 and forced-choice predictions to parsed rows (one batched pass).

    Columns added: ``top1_token``, ``top1_log_prob``, ``top1_gender``, ``log_prob_female``,
    ``log_prob_male`` (log of the summed probabilities of the slot's forms) and
    ``choice_gender``.
    """
    inputs: list[tuple[int, ...]] = []
    positions: list[int] = []
    target_ids: list[int] = []
    top_request: list[int] = []
    owners: list[tuple[int, str, int]] = []  # (row, gender, form index) per request
    for row_index, row in enumerate(rows.itertuples(index=False)):
        ids = scorer.encode(row.masked)
        if ids.count(scorer.mask_id) != 1:
            raise CdsbiasError(f"{row.file}:{row.line}: the masked sentence has no single mask.")
        top_request.append(len(inputs))
        inputs.append(tuple(ids))
        positions.append(ids.index(scorer.mask_id))
        target_ids.append(-1)
        owners.append((row_index, "", -1))
        female, male = inventory.slots[row.slot]
        for gender, forms in ((FEMALE, female), (MALE, male)):
            for form_index, form in enumerate(forms):
                encoded = scorer.encode_target(row.masked, _cased(form, row.capitalized))
                piece_inputs, piece_positions, piece_ids = chain_rule_requests(encoded)
                inputs.extend(piece_inputs)
                positions.extend(piece_positions)
                target_ids.extend(piece_ids)
                owners.extend([(row_index, gender, form_index)] * len(piece_ids))
    log_probs, top_ids, top_lps = log_probs_and_top_k(scorer, inputs, positions, target_ids, 1)
    form_scores: dict[tuple[int, str, int], float] = {}
    for request, owner in enumerate(owners):
        if owner[1]:
            form_scores[owner] = form_scores.get(owner, 0.0) + float(log_probs[request])
    out = rows.reset_index(drop=True).copy()
    tokens = [decode_token(scorer.tokenizer, int(top_ids[r, 0])) for r in top_request]
    out["top1_token"] = tokens
    out["top1_log_prob"] = [float(top_lps[r, 0]) for r in top_request]
    out["top1_gender"] = [inventory.gender(t if case_sensitive else t.lower()) for t in tokens]
    lp_female = np.full(len(out), -np.inf)
    lp_male = np.full(len(out), -np.inf)
    for (row_index, gender, _), value in form_scores.items():
        target = lp_female if gender == FEMALE else lp_male
        target[row_index] = np.logaddexp(target[row_index], value)
    out["log_prob_female"] = lp_female
    out["log_prob_male"] = lp_male
    out["choice_gender"] = np.where(
        lp_female > lp_male, FEMALE, np.where(lp_male > lp_female, MALE, UNKNOWN)
    )
    return out


# --------------------------------------------------------------------------- metrics
def classification_metrics(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    """Accuracy and per-gender precision/recall/F1 as GenDa Lens computes them.

    GenDa Lens uses ``sklearn.metrics.classification_report(..., zero_division=1)``; the
    same conventions are written out here (``UNK`` predictions are always wrong).
    """
    gold_arr = np.asarray(list(gold), dtype=object)
    pred_arr = np.asarray(list(predicted), dtype=object)
    n = len(gold_arr)
    result: dict[str, float] = {
        "n": float(n),
        "accuracy": float(np.mean(gold_arr == pred_arr)) if n else math.nan,
        "unk_predictions": float(np.sum(pred_arr == UNKNOWN)),
    }
    for gender in (FEMALE, MALE):
        tp = float(np.sum((pred_arr == gender) & (gold_arr == gender)))
        fp = float(np.sum((pred_arr == gender) & (gold_arr != gender)))
        fn = float(np.sum((pred_arr != gender) & (gold_arr == gender)))
        result[f"precision_{gender}"] = tp / (tp + fp) if tp + fp else 1.0
        result[f"recall_{gender}"] = tp / (tp + fn) if tp + fn else 1.0
        result[f"f1_{gender}"] = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 1.0
        result[f"n_{gender}"] = tp + fn
    result["macro_f1"] = (result["f1_female"] + result["f1_male"]) / 2
    return result


def summarize_conditions(scored: pd.DataFrame) -> dict[str, Any]:
    """Per-prediction-mode metrics of the pro and anti rows and their gender effects."""
    out: dict[str, Any] = {}
    for mode in PREDICTIONS:
        block: dict[str, Any] = {}
        for condition in CONDITIONS:
            part = scored[scored["condition"] == condition]
            block[condition] = classification_metrics(part["gender"], part[f"{mode}_gender"])
        pro, anti = block["pro"], block["anti"]
        block["gender_effect"] = log2_ratio(pro["accuracy"], anti["accuracy"])
        block["gender_effect_f1"] = log2_ratio(pro["macro_f1"], anti["macro_f1"])
        block["gender_effect_genda_rounded"] = genda_rounded_log2_ratio(
            pro["accuracy"], anti["accuracy"]
        )
        out[mode] = block
    return out


def flat_metrics(summary: dict[str, Any], primary: str, prefix: str = "") -> dict[str, float]:
    """Flat tracker metrics: every mode's numbers, and the primary mode's unprefixed."""
    metrics: dict[str, float] = {}
    for mode in PREDICTIONS:
        block = summary[mode]
        names = [f"{prefix}{mode}_"] + ([prefix] if mode == primary else [])
        for name in names:
            for condition in CONDITIONS:
                for key in ("accuracy", "macro_f1", "f1_female", "f1_male"):
                    metrics[f"{name}{condition}_{key}"] = float(block[condition][key])
            for key in ("gender_effect", "gender_effect_f1"):
                metrics[f"{name}{key}"] = float(block[key])
    return metrics


def format_block(title: str, block: dict[str, Any]) -> list[str]:
    """Readable lines for one prediction mode."""
    lines = [
        title,
        f"  {'condition':<10}{'accuracy':>10}{'macro F1':>10}{'F1 fem':>9}{'F1 male':>9}"
        f"{'n':>7}{'UNK':>6}",
    ]
    for condition in CONDITIONS:
        m = block[condition]
        lines.append(
            f"  {condition:<10}{m['accuracy']:>10.3f}{m['macro_f1']:>10.3f}"
            f"{m['f1_female']:>9.3f}{m['f1_male']:>9.3f}{int(m['n']):>7}"
            f"{int(m['unk_predictions']):>6}"
        )
    lines.append(
        f"  gender effect log2(pro/anti): accuracy {block['gender_effect']:.3f}, "
        f"macro F1 {block['gender_effect_f1']:.3f}"
    )
    return lines


#: Headline metrics shared by WinoBias and DaWinoBias (for the headline prediction mode).
HEADLINE = (
    Metric("gender_effect", "gender effect log2(acc. pro / acc. anti)", "log2 ratio", "closer"),
    Metric("pro_accuracy", "accuracy, pro-stereotypical", "proportion", "higher", 1.0),
    Metric("anti_accuracy", "accuracy, anti-stereotypical", "proportion", "higher", 1.0),
)


class MaskedPronounBenchmark(Benchmark):
    """What WinoBias and DaWinoBias share: pronoun files, scoring and the report blocks.

    Subclasses set :attr:`inventory` (the pronoun forms), :attr:`hint` (what to evaluate
    instead when the pronouns are not in the model's vocabulary), :attr:`choice_title`
    and :attr:`dataset`; their options have ``prediction`` and ``text``.
    """

    inventory: ClassVar[PronounInventory]
    hint: ClassVar[str]
    choice_title: ClassVar[str]
    undefined_reason = "the gender effect needs pro- and anti-stereotypical rows with accuracy > 0"
    headline = HEADLINE
    curve_title = "gender effect, headline prediction mode"
    curve_ylabel = "log2(accuracy pro / accuracy anti)"

    def _path(self, filename: str) -> Path:
        # --data may name the folder or any one file in it: both conditions are read.
        if self.data_file is not None:
            folder = self.data_file if self.data_file.is_dir() else self.data_file.parent
            return folder / filename
        return self.default_file(filename)

    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        check_vocabulary(scorer, rows, self.inventory, self.name, self.hint)
        case_sensitive = self.options.text == "genda"
        return score_rows(scorer, rows, self.inventory, case_sensitive=case_sensitive)

    def _mode_lines(self, summary: dict[str, Any]) -> list[str]:
        """One block per prediction mode, the headline mode first."""
        lines: list[str] = []
        primary = self.options.prediction
        for mode in (primary, *[m for m in PREDICTIONS if m != primary]):
            title = (
                "top-1 over the vocabulary (GenDa Lens)" if mode == "top1" else self.choice_title
            )
            lines.extend(format_block(f"{mode}: {title}", summary[mode]))
        return lines
