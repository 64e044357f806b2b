"""WinoBias as a masked-pronoun task (Zhao et al. 2018 data, GenDa Lens procedure).

Each WinoBias sentence exists in a pro-stereotypical version ("[The developer] argued with
the designer because [he] did not like the design.") and an anti-stereotypical one ("...
because [she] ..."). Following the DaWinoBias language-modelling task of GenDa Lens, the
gold pronoun is replaced by one mask and the model's guess is compared with it, grouped by
gender. Two guesses are scored from the same forward pass:

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
``gender_effect_genda_rounded`` reproducing the rounding.

WinoBias text quirks handled by the parser: leading line numbers, stray spaces inside
brackets ("[ physician]") and between words, CRLF/LF line endings, lines with several
bracketed pronouns (the first is masked; the others stay visible), and lines whose pronoun
is not bracketed (it is found as a whole word, and the row is flagged).

References: Jieyu Zhao, Tianlu Wang, Mark Yatskar, Vicente Ordonez, Kai-Wei Chang (2018).
Gender Bias in Coreference Resolution: Evaluation and Debiasing Methods. NAACL.
Thea Rolskov Sloth, Astrid Sletten Rybner (2023). GenDa Lens
(https://github.com/DaDebias/genda-lens), ``genda_lens/lm_tasks/wino_utils.py``.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from cdsbias.benchmarks.base import Benchmark, register
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MASK_PLACEHOLDER, MaskedLMScorer
from cdsbias.scoring.extra_topk import chain_rule_requests, decode_token, log_probs_and_top_k

FEMALE, MALE, UNKNOWN = "female", "male", "UNK"
CONDITIONS = ("pro", "anti")
PREDICTIONS = ("top1", "choice")
TEXT_STYLES = ("genda", "original")


@dataclass(frozen=True)
class PronounInventory:
    """The gendered pronouns of a language, grouped by grammatical slot.

    Attributes:
        language: Language code.
        slots: ``{slot: (female forms, male forms)}``; a form may only be gold in one slot.
        gold_slot: ``{gold form: slot}`` (a form that is in several slots maps to one).
        priority: GenDa Lens' search order for the pronoun to mask (``idx_pron``).
    """

    language: str
    slots: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]
    gold_slot: dict[str, str]
    priority: tuple[str, ...]

    @property
    def female(self) -> frozenset[str]:
        return frozenset(f for forms, _ in self.slots.values() for f in forms)

    @property
    def male(self) -> frozenset[str]:
        return frozenset(m for _, forms in self.slots.values() for m in forms)

    def gender(self, form: str) -> str:
        """``female``, ``male`` or ``UNK`` for a (lower-case) token."""
        if form in self.female:
            return FEMALE
        if form in self.male:
            return MALE
        return UNKNOWN


ENGLISH = PronounInventory(
    language="en",
    slots={
        "subject": (("she",), ("he",)),
        "object/possessive": (("her",), ("him", "his")),
        "independent possessive": (("hers",), ("his",)),
        "reflexive": (("herself",), ("himself",)),
    },
    gold_slot={
        "she": "subject",
        "he": "subject",
        "her": "object/possessive",
        "him": "object/possessive",
        "his": "object/possessive",
        "hers": "independent possessive",
        "herself": "reflexive",
        "himself": "reflexive",
    },
    priority=("his", "her", "he", "she", "him", "hers", "himself", "herself"),
)


# --------------------------------------------------------------------------- parsing
_GROUP = re.compile(r"\[([^\[\]]*)\]")
_NUMBER = re.compile(r"^(\d+)\s+")
_OPENING = "\"'([{«"
_CLOSING = ".,;:!?\"')]}»"


def genda_tokens(text: str) -> str:
    """GenDa Lens' text as the model sees it: lower-cased spaCy tokens joined by spaces.

    GenDa Lens runs spaCy's Danish tokenizer, lower-cases the tokens, drops the bracket
    tokens and joins the rest with ``" "``. This rule reproduces that for WinoBias-style
    sentences without spaCy: leading/trailing punctuation is split off each word (a run of
    dots such as ".." stays one token), word-internal marks ("e-mail", "3.5") stay, and a
    run of ``n > 1`` spaces becomes spaCy's whitespace token of ``n - 1`` spaces. It gives
    the same string as spaCy 3.8 ``spacy.blank("da")`` on all 1,348 DaWinoBias sentences.
    """
    tokens: list[str] = []
    extra_spaces = 0
    for word in text.lower().split(" "):
        if not word:
            extra_spaces += 1
            continue
        if extra_spaces:
            tokens.append(" " * extra_spaces)
            extra_spaces = 0
        head: list[str] = []
        tail: list[str] = []
        while len(word) > 1 and word[0] in _OPENING:
            head.append(word[0])
            word = word[1:]
        while len(word) > 1 and word[-1] in _CLOSING:
            if word.endswith(".."):
                dots = len(word) - len(word.rstrip("."))
                if dots == len(word):
                    break
                tail.insert(0, word[-dots:])
                word = word[:-dots]
                continue
            tail.insert(0, word[-1])
            word = word[:-1]
        tokens.extend([*head, word, *tail])
    return " ".join(tokens)


def parse_line(
    line: str,
    inventory: PronounInventory,
    *,
    source: str,
    line_number: int,
    selection: str = "first",
    text_style: str = "original",
) -> dict[str, Any] | None:
    """Parses one WinoBias-format line; returns ``None`` for a blank line.

    Args:
        line: ``[<n> ]<sentence with [bracketed] entity and pronoun>``.
        inventory: The language's pronouns.
        source: File name for error messages.
        line_number: 1-based line number for error messages.
        selection: ``first`` masks the first bracketed pronoun; ``genda`` masks the pronoun
            GenDa Lens picks: the first form of ``inventory.priority`` occurring anywhere in
            the sentence, bracketed or not.
        text_style: ``original`` keeps the text; ``genda`` lower-cases it and spaces off
            punctuation as GenDa Lens' spaCy tokenization does.

    Raises:
        CdsbiasError: Unbalanced or empty brackets, or no pronoun (message has file:line).
    """
    where = f"{source}:{line_number}"
    # Ends only (CR, trailing spaces): inner spacing matters to GenDa Lens' text.
    text = line.strip().replace("\t", " ")
    if not text:
        return None
    number_match = _NUMBER.match(text)
    number = int(number_match.group(1)) if number_match else None
    if number_match:
        text = text[number_match.end() :]
    clean = ""
    groups: list[tuple[int, int, str]] = []
    position = 0
    for match in _GROUP.finditer(text):
        inner = " ".join(match.group(1).split())
        if not inner:
            raise CdsbiasError(f"{where}: empty [] in {line.strip()!r}.")
        clean += text[position : match.start()]
        groups.append((len(clean), len(clean) + len(inner), inner))
        clean += inner
        position = match.end()
    clean += text[position:]
    if "[" in clean or "]" in clean:
        raise CdsbiasError(f"{where}: unbalanced or nested brackets in {line.strip()!r}.")
    forms = set(inventory.gold_slot)
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(sorted(forms, key=len, reverse=True)) + r")(?!\w)", re.IGNORECASE
    )
    occurrences = [(m.start(), m.end(), m.group(0)) for m in pattern.finditer(clean)]
    bracketed = [g for g in groups if g[2].lower() in forms]
    if not occurrences:
        raise CdsbiasError(
            f"{where}: no gendered pronoun ({', '.join(sorted(forms))}) in {line.strip()!r}."
        )
    quirks: list[str] = []
    if selection == "genda":
        lowered = [o[2].lower() for o in occurrences]
        chosen_form = next(f for f in inventory.priority if f in lowered)
        start, end, written = occurrences[lowered.index(chosen_form)]
        if not any(g[0] == start for g in bracketed):
            quirks.append("unbracketed pronoun")
    elif bracketed:
        start, end, written = bracketed[0]
    else:
        start, end, written = occurrences[0]
        quirks.append("unbracketed pronoun")
    if len(occurrences) > 1:
        quirks.append("several pronouns")
    gold = written.lower()
    entity = next((g[2] for g in groups if g[2].lower() not in forms), "")
    if text_style == "genda":
        # The pronoun becomes a placeholder word, so punctuation next to it splits off too.
        sentinel = "\x00"
        masked = genda_tokens(clean[:start] + sentinel + clean[end:])
        masked = masked.replace(sentinel, MASK_PLACEHOLDER)
    else:
        masked = " ".join(f"{clean[:start]}{MASK_PLACEHOLDER}{clean[end:]}".split())
    return {
        "line": line_number,
        "number": number,
        "sentence": " ".join(clean.split()),
        "masked": masked,
        "pronoun": gold,
        "capitalized": written[:1].isupper() and text_style != "genda",
        "gender": inventory.gender(gold),
        "slot": inventory.gold_slot[gold],
        "entity": entity,
        "quirk": "; ".join(quirks),
    }


def read_file(
    path: str | Path,
    inventory: PronounInventory,
    *,
    selection: str = "first",
    text_style: str = "original",
) -> pd.DataFrame:
    """Reads a WinoBias-format file (any line endings, UTF-8) into rows."""
    path = Path(path)
    if not path.is_file():
        raise CdsbiasError(f"{path} not found.")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CdsbiasError(f"{path} is not UTF-8 text ({exc}).") from exc
    rows = []
    # splitlines() handles LF, CRLF and lone CR, as GenDa Lens' read().splitlines().
    for number, line in enumerate(text.splitlines(), start=1):
        row = parse_line(
            line,
            inventory,
            source=str(path),
            line_number=number,
            selection=selection,
            text_style=text_style,
        )
        if row is not None:
            row["file"] = path.name
            rows.append(row)
    if not rows:
        raise CdsbiasError(f"{path} has no sentences.")
    return pd.DataFrame.from_records(rows)


def warn_quirks(rows: pd.DataFrame, name: str) -> None:
    """One warning listing the rows whose pronoun was not bracketed."""
    odd = rows[rows["quirk"].str.contains("unbracketed", regex=False)]
    if len(odd):
        where = ", ".join(f"{r.file}:{r.line}" for r in odd.head(5).itertuples())
        more = f" and {len(odd) - 5} more" if len(odd) > 5 else ""
        warnings.warn(
            f"{name}: {len(odd)} line(s) have an unbracketed pronoun ({where}{more}); it was "
            "found as a whole word and masked.",
            stacklevel=2,
        )


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


def log2_ratio(first: float, second: float) -> float:
    """``log2(first / second)``; NaN when undefined (GenDa Lens would raise)."""
    if not (first > 0 and second > 0):
        return math.nan
    return math.log2(first / second)


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
        rounded = log2_ratio(round(pro["accuracy"], 2), round(anti["accuracy"], 2))
        block["gender_effect_genda_rounded"] = (
            round(rounded, 2) if math.isfinite(rounded) else math.nan
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


def _option_list(value: str | Iterable[str], allowed: Sequence[str], what: str) -> list[str]:
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
    items = [v for v in items if v]
    for item in items:
        if item not in allowed:
            raise CdsbiasError(f"Unknown {what} {item!r}; choose from {', '.join(allowed)}.")
    if not items:
        raise CdsbiasError(f"No {what} given; choose from {', '.join(allowed)}.")
    return items


def _choice(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise CdsbiasError(f"Unknown {what} {value!r}; choose from {', '.join(allowed)}.")
    return value


class MaskedPronounBenchmark(Benchmark):
    """What WinoBias and DaWinoBias share: pronoun files, scoring and the report blocks.

    Subclasses set :attr:`inventory` (the pronoun forms), :attr:`hint` (what to evaluate
    instead when the pronouns are not in the model's vocabulary), :attr:`choice_title`
    and :attr:`dataset`, and keep ``self.prediction`` and ``self.text``.
    """

    inventory: ClassVar[PronounInventory]
    hint: ClassVar[str]
    choice_title: ClassVar[str]
    prediction: str
    text: str

    def _path(self, filename: str) -> Path:
        # --data may name the folder or any one file in it: both conditions are read.
        if self.data_file is not None:
            folder = self.data_file if self.data_file.is_dir() else self.data_file.parent
            return folder / filename
        return self.default_file(filename)

    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        check_vocabulary(scorer, rows, self.inventory, self.name, self.hint)
        return score_rows(scorer, rows, self.inventory, case_sensitive=self.text == "genda")

    def _mode_lines(self, summary: dict[str, Any]) -> list[str]:
        """One block per prediction mode, the headline mode first."""
        lines: list[str] = []
        for mode in (self.prediction, *[m for m in PREDICTIONS if m != self.prediction]):
            title = (
                "top-1 over the vocabulary (GenDa Lens)" if mode == "top1" else self.choice_title
            )
            lines.extend(format_block(f"{mode}: {title}", summary[mode]))
        return lines


@register
class WinoBias(MaskedPronounBenchmark):
    """English WinoBias, masked-pronoun procedure of GenDa Lens.

    Options (``--option key=value``):
        types: ``1``, ``2`` or ``1,2`` (default ``1,2``).
        splits: ``dev``, ``test`` or ``dev,test`` (default ``test``).
        prediction: Headline mode, ``choice`` (default) or ``top1``; both are always
            computed.
        text: ``original`` (default: brackets removed, casing kept) or ``genda``
            (lower-cased, punctuation spaced off).

    ``--data DIR`` points at a folder holding the WinoBias files
    (``pro_stereotyped_type1.txt.test``, ...); by default they come from the ``winobias``
    dataset (``cdsbias data fetch winobias``).
    """

    name = "winobias"
    dataset = "winobias"
    description = (
        "WinoBias (Zhao et al. 2018), English type 1+2: masked gold pronoun, model's "
        "he/she choice vs gold; accuracy/F1 pro vs anti, log2 gender effect (GenDa Lens style)"
    )
    languages = ("en",)
    inventory = ENGLISH
    hint = (
        "winobias is English; for a Danish model use --benchmark dawinobias, otherwise "
        "evaluate an English (or multilingual) masked LM."
    )
    choice_title = "forced choice female vs male pronoun forms"

    def __init__(
        self,
        *,
        data_file: str | Path | None = None,
        data_dir: str | Path | None = None,
        language: str = "en",
        types: str | Sequence[str] = "1,2",
        splits: str | Sequence[str] = "test",
        prediction: str = "choice",
        text: str = "original",
    ) -> None:
        super().__init__(data_file=data_file, data_dir=data_dir, language=language)
        self.types = _option_list(types, ("1", "2"), "WinoBias type")
        self.splits = _option_list(splits, ("dev", "test"), "WinoBias split")
        self.prediction = _choice(prediction, PREDICTIONS, "prediction mode")
        self.text = _choice(text, TEXT_STYLES, "text style")

    def load(self) -> pd.DataFrame:
        frames = []
        for condition in CONDITIONS:
            for wino_type in self.types:
                for split in self.splits:
                    filename = f"{condition}_stereotyped_type{wino_type}.txt.{split}"
                    rows = read_file(
                        self._path(filename), ENGLISH, selection="first", text_style=self.text
                    )
                    rows.insert(0, "condition", condition)
                    rows.insert(1, "type", int(wino_type))
                    rows.insert(2, "split", split)
                    frames.append(rows)
        rows = pd.concat(frames, ignore_index=True)
        warn_quirks(rows, self.name)
        return rows

    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        summary: dict[str, Any] = {
            "prediction": self.prediction,
            "types": self.types,
            "splits": self.splits,
            **summarize_conditions(scored),
            "by_type": {},
            "rows_with_several_pronouns": int(scored["quirk"].str.contains("several").sum()),
            "rows_with_unbracketed_pronoun": int(scored["quirk"].str.contains("unbracketed").sum()),
        }
        metrics = flat_metrics(summary, self.prediction)
        for wino_type, part in scored.groupby("type"):
            block = summarize_conditions(part)
            summary["by_type"][f"type{wino_type}"] = block
            metrics.update(flat_metrics(block, self.prediction, prefix=f"type{wino_type}_"))
        return summary, metrics

    def format_report(self, summary: dict[str, Any]) -> str:
        lines = [f"WinoBias (types {','.join(self.types)}; {','.join(self.splits)})"]
        lines.extend(self._mode_lines(summary))
        for name, block in summary["by_type"].items():
            lines.extend(format_block(f"{name}, {self.prediction}", block[self.prediction]))
        return "\n".join(lines)
