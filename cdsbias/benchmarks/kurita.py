"""Kurita et al. (2019): log-probability bias scores of masked LMs, and their WEAT tests.

A *template* holds a target slot ``GGG`` (the gendered word) and an attribute slot
``XXX``, e.g. ``"GGG likes XXX."``. For target words ``m`` (male) and ``f`` (female) and an
attribute ``a`` (all natural logs, ``P`` from the masked LM; the gender slot is the
template's ``GGG``, wherever it stands relative to ``XXX``)::

    gender_fill_bias             = ln P(m | "[MASK] likes a.") - ln P(f | "[MASK] likes a.")
    gender_fill_prior_correction = ln P(m | "[MASK] likes [MASK].") - ln P(f | <same>)
    gender_fill_bias_prior_corrected = gender_fill_bias - gender_fill_prior_correction
    target_fill_bias             = ln P(a | "m likes [MASK].") - ln P(a | "f likes [MASK].")

For one single-piece word per side, the log-probability difference at a position equals
the *logit* difference there (the softmax normaliser cancels), so this is also the
"logit difference" of the reference notebook. With several words per side (e.g.
"boys,men" vs "girls,women") their probabilities are summed, ``ln sum_m P(m) - ln sum_f
P(f)``, as in the reference's ``bias_calculator.py``; ``target_fill_bias`` then compares the
*mean* probability of the attribute over each side's words. Multi-piece words are scored by
the chain rule (:mod:`cdsbias.scoring.scorer`), so ``target_fill_bias`` is defined for
attributes of several word pieces, where the reference returns NaN. The masked attribute of
the prior sentence is one ``[MASK]``, as in the paper (the prior does not depend on ``a``).

Benchmark mode runs the paper's WEAT-style tests (career/family, math/arts, science/arts
with he/she and boys,men/girls,women templates; pleasant/unpleasant with flowers/insects).
For each test, with ``s`` the prior-corrected score of every (template, attribute) row and
X, Y the two attribute sets::

    effect_size = (mean_X s - mean_Y s) / (std_{X u Y} s + 1e-8)       (sample std, ddof=1)
    p_value     = share of random re-splits of X u Y into |X|, |Y| with
                  |mean difference| strictly greater than the observed one

exactly as ``get_effect_size`` and ``exact_mc_perm_test`` of the reference script
(100,000 Monte Carlo permutations by default, no +1 correction).

Differences from the reference code (``keitakurita/contextual_embedding_bias_measure``):

* The reference reads the prior at the *last* ``[MASK]`` when the gender word comes first
  (``use_last_mask=gender_comes_first``) and its reverse search returns the index without
  the ``[CLS]`` offset, so for ``"GGG likes XXX."`` the prior is read at the token *before*
  the attribute mask ("likes"), not at the gender slot. Here the gender slot is located by
  its placeholder's order, before or after ``XXX``.
* A multi-piece word is scored by the chain rule, not by its first word piece
  (``accept_wordpiece=True``), and ``target_fill_bias`` is never NaN.
* See ``cdsbias/resources/kurita/README.md`` for the word-list fixes.

Reference: Keita Kurita, Nidhi Vyas, Ayush Pareek, Alan W Black, Yulia Tsvetkov (2019).
Measuring Bias in Contextualized Word Representations. GeBNLP @ ACL 2019.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cdsbias.benchmarks.base import Benchmark, Metric, register
from cdsbias.benchmarks.kurita_data import load_word_lists, packaged_tests
from cdsbias.benchmarks.stats import effect_size, permutation_p_value
from cdsbias.errors import CdsbiasError, unknown_name_error
from cdsbias.scoring import MASK_PLACEHOLDER, MaskedLMScorer

TARGET_SLOT = "GGG"
ATTRIBUTE_SLOT = "XXX"
SCORE_COLUMNS = (
    "gender_fill_bias",
    "gender_fill_prior_correction",
    "gender_fill_bias_prior_corrected",
    "target_fill_bias",
)
DEFAULT_PERMUTATIONS = 100_000


@dataclass(frozen=True)
class KuritaItem:
    """One bias-score request.

    Attributes:
        template: Text with one ``GGG`` and one ``XXX`` placeholder.
        male_words: The first side's target words (probabilities are summed).
        female_words: The second side's target words.
        attribute: The word (or phrase) filled into ``XXX``.
    """

    template: str
    male_words: tuple[str, ...]
    female_words: tuple[str, ...]
    attribute: str


def _words(value: str | Sequence[str]) -> tuple[str, ...]:
    words = (value,) if isinstance(value, str) else tuple(value)
    words = tuple(w.strip() for w in words if w.strip())
    if not words:
        raise CdsbiasError("A side of the target pair has no words.")
    return words


def _check_template(template: str) -> bool:
    """Validates the placeholders; returns whether the gender slot comes first."""
    for slot in (TARGET_SLOT, ATTRIBUTE_SLOT):
        count = template.count(slot)
        if count != 1:
            raise CdsbiasError(
                f"Template {template!r} must contain {slot} exactly once (found {count}); "
                f"{TARGET_SLOT} marks the gendered word, {ATTRIBUTE_SLOT} the attribute."
            )
    return template.index(TARGET_SLOT) < template.index(ATTRIBUTE_SLOT)


def _logsumexp(values: np.ndarray) -> float:
    top = float(np.max(values))
    if not np.isfinite(top):
        return top
    return top + float(np.log(np.sum(np.exp(values - top))))


def score_items(scorer: MaskedLMScorer, items: Sequence[KuritaItem]) -> pd.DataFrame:
    """Scores many items in one batched, deduplicated pass.

    Returns:
        One row per item with the four columns of :data:`SCORE_COLUMNS`.
    """
    sentences: list[str] = []
    targets: list[str] = []
    slots: list[int] = []
    layout: list[tuple[list[int], list[int], list[int], list[int], list[int], list[int]]] = []

    def request(sentence: str, target: str, slot: int) -> int:
        sentences.append(sentence)
        targets.append(target)
        slots.append(slot)
        return len(sentences) - 1

    for item in items:
        gender_first = _check_template(item.template)
        if not item.attribute.strip():
            raise CdsbiasError(f"Empty attribute word for template {item.template!r}.")
        shown = item.template.replace(ATTRIBUTE_SLOT, item.attribute).replace(
            TARGET_SLOT, MASK_PLACEHOLDER
        )
        bland = item.template.replace(ATTRIBUTE_SLOT, MASK_PLACEHOLDER).replace(
            TARGET_SLOT, MASK_PLACEHOLDER
        )
        gender_slot = 0 if gender_first else 1
        parts = []
        for words in (item.male_words, item.female_words):
            parts.append([request(shown, w, 0) for w in words])
            parts.append([request(bland, w, gender_slot) for w in words])
            parts.append(
                [
                    request(
                        item.template.replace(TARGET_SLOT, w).replace(
                            ATTRIBUTE_SLOT, MASK_PLACEHOLDER
                        ),
                        item.attribute,
                        0,
                    )
                    for w in words
                ]
            )
        layout.append(tuple(parts))  # type: ignore[arg-type]
    log_probs = scorer.target_log_probs(sentences, targets, slots) if sentences else np.zeros(0)
    records = []
    for m_shown, m_bland, m_target, f_shown, f_bland, f_target in layout:
        bias = _logsumexp(log_probs[m_shown]) - _logsumexp(log_probs[f_shown])
        prior = _logsumexp(log_probs[m_bland]) - _logsumexp(log_probs[f_bland])
        target = (_logsumexp(log_probs[m_target]) - np.log(len(m_target))) - (
            _logsumexp(log_probs[f_target]) - np.log(len(f_target))
        )
        records.append(
            {
                "gender_fill_bias": bias,
                "gender_fill_prior_correction": prior,
                "gender_fill_bias_prior_corrected": bias - prior,
                "target_fill_bias": float(target),
            }
        )
    return pd.DataFrame.from_records(records, columns=list(SCORE_COLUMNS))


def bias_score(
    scorer: MaskedLMScorer,
    template: str,
    gender_words: tuple[str | Sequence[str], str | Sequence[str]],
    attribute: str,
) -> dict[str, float]:
    """Kurita et al.'s bias scores of one attribute in one template.

    Args:
        scorer: The shared masked-LM scorer.
        template: Text with ``GGG`` (gendered word) and ``XXX`` (attribute), in either order.
        gender_words: ``(male, female)``; each a word or a list of words whose
            probabilities are summed.
        attribute: The attribute word.

    Returns:
        ``gender_fill_bias``, ``gender_fill_prior_correction``,
        ``gender_fill_bias_prior_corrected`` and ``target_fill_bias`` (natural log; see the
        module docstring for the formulas).

    Example:
        >>> bias_score(scorer, "GGG is a XXX.", ("he", "she"), "nurse")  # doctest: +SKIP
    """
    if len(gender_words) != 2:
        raise CdsbiasError("gender_words must be a (male, female) pair.")
    item = KuritaItem(template, _words(gender_words[0]), _words(gender_words[1]), attribute)
    return {k: float(v) for k, v in score_items(scorer, [item]).iloc[0].items()}


@dataclass
class KuritaOptions:
    """Options of the Kurita benchmark."""

    tests: list[str] | None = field(
        default=None,
        metadata={
            "help": "Subset of career_family, math_arts, science_arts, pleasant_unpleasant "
            "(or of the tests of --data); default: all."
        },
    )
    permutations: int = field(
        default=DEFAULT_PERMUTATIONS,
        metadata={"help": "Monte Carlo permutations per test (reference: 100000).", "min": 1},
    )
    seed: int = field(default=0, metadata={"help": "Seed of the permutation test."})
    vocab_filter: bool = field(
        default=False,
        metadata={
            "help": "Drop attribute words of several word pieces, as the reference script's "
            "to_words(filter_oov=True) does."
        },
    )


@register
class Kurita(Benchmark):
    """Kurita et al. (2019) WEAT-style tests with prior-corrected log-probability scores.

    ``--data FILE`` replaces the attribute lists by a ``set<TAB>word`` file (same set names).
    """

    name = "kurita"
    description = (
        "Kurita et al. 2019: prior-corrected log-probability bias of he/she given WEAT "
        "attributes (career/family, math/arts, science/arts; flowers/insects control), "
        "effect size + permutation test"
    )
    languages = ("en",)
    undefined_reason = "an effect size needs attribute words on both sides of each test"
    Options = KuritaOptions
    curve_title = "effect size per test"
    curve_ylabel = "effect size (pooled SD units; 0 = unbiased)"
    hub_dataset = ("kurita-weat", "Kurita et al. 2019 WEAT tests")
    citation = (
        "Kurita, K., Vyas, N., Pareek, A., Black, A. W., & Tsvetkov, Y. (2019). Measuring "
        "Bias in Contextualized Word Representations. GeBNLP @ ACL 2019."
    )

    def headline_metrics(self) -> tuple[Metric, ...]:
        """The effect size of each gender test run (control tests only if nothing else)."""
        table = packaged_tests()
        chosen = table[table["test"].isin(self.options.tests)] if self.options.tests else table
        gender = chosen[chosen["targets"] == "gender"]
        names = (gender if len(gender) else chosen)["test"].tolist() or self.options.tests or []
        return tuple(
            Metric(f"{test}_effect_size", f"effect size, {test}", "Cohen's d", "closer")
            for test in names
        )

    def load(self) -> pd.DataFrame:
        sets, templates, tests = load_word_lists(self.data_file)
        if self.options.tests is not None:
            for name in self.options.tests:
                if name not in set(tests["test"]):
                    raise unknown_name_error("kurita test", name, tests["test"])
            tests = tests[tests["test"].isin(self.options.tests)]
        records = []
        for test in tests.itertuples(index=False):
            chosen = templates[templates["targets"] == test.targets]
            if chosen.empty:
                raise CdsbiasError(f"kurita: no templates for targets {test.targets!r}.")
            for side, set_name in (("x", test.attribute_x), ("y", test.attribute_y)):
                if set_name not in sets:
                    raise CdsbiasError(
                        f"kurita: attribute set {set_name!r} of test {test.test} is missing "
                        f"from the attribute list (sets: {', '.join(sorted(sets))})."
                    )
                for template in chosen.itertuples(index=False):
                    _check_template(template.template)
                    for word in sets[set_name]:
                        records.append(
                            {
                                "test": test.test,
                                "side": side,
                                "attribute_set": set_name,
                                "attribute": word,
                                "template": template.template,
                                "male_words": template.first_words,
                                "female_words": template.second_words,
                            }
                        )
        return pd.DataFrame.from_records(records)

    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        items = [
            KuritaItem(
                row.template,
                _words(row.male_words.split(",")),
                _words(row.female_words.split(",")),
                row.attribute,
            )
            for row in rows.itertuples(index=False)
        ]
        scores = score_items(scorer, items)
        out = rows.copy()  # keeps the index: shards scored on several ranks are re-joined on it
        for column in SCORE_COLUMNS:
            out[column] = scores[column].to_numpy()
        # Pieces of the attribute as the model sees it in the template (for vocab_filter).
        out["attribute_pieces"] = [
            len(
                scorer.encode_target(
                    item.template.replace(TARGET_SLOT, item.male_words[0]).replace(
                        ATTRIBUTE_SLOT, MASK_PLACEHOLDER
                    ),
                    item.attribute,
                ).positions
            )
            for item in items
        ]
        split = float(np.mean(out["attribute_pieces"] > 1)) if len(out) else 0.0
        if split > 0.5:
            warnings.warn(
                f"kurita: {split:.0%} of the attribute words are several word pieces for this "
                "model's tokenizer (common with small vocabularies, and with non-English "
                "models); their fill-in probabilities are chain-rule products over the pieces, "
                "lower than single-piece scores, so target_fill_bias compares unlike units. "
                "vocab_filter=true keeps single-piece words only, as the reference script does.",
                stacklevel=2,
            )
        return out

    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        used = scored[scored["attribute_pieces"] == 1] if self.options.vocab_filter else scored
        summary: dict[str, Any] = {
            "score": "gender_fill_bias_prior_corrected",
            "permutations": self.options.permutations,
            "seed": self.options.seed,
            "vocab_filter": self.options.vocab_filter,
            "tests": {},
        }
        metrics: dict[str, float] = {}
        for test, group in used.groupby("test", sort=False):
            x = group[group["side"] == "x"]
            y = group[group["side"] == "y"]
            main_x = x["gender_fill_bias_prior_corrected"].to_numpy()
            main_y = y["gender_fill_bias_prior_corrected"].to_numpy()
            result = {
                "attribute_x": x["attribute_set"].iloc[0] if len(x) else None,
                "attribute_y": y["attribute_set"].iloc[0] if len(y) else None,
                "n_x": len(x),
                "n_y": len(y),
                "mean_x": float(np.mean(main_x)) if len(x) else float("nan"),
                "mean_y": float(np.mean(main_y)) if len(y) else float("nan"),
                "effect_size": effect_size(main_x, main_y),
                "p_value": permutation_p_value(
                    main_x, main_y, self.options.permutations, self.options.seed
                ),
                "target_fill_effect_size": effect_size(
                    x["target_fill_bias"].to_numpy(), y["target_fill_bias"].to_numpy()
                ),
                "dropped_multi_piece": int(
                    (scored[scored["test"] == test]["attribute_pieces"] > 1).sum()
                )
                if self.options.vocab_filter
                else 0,
            }
            summary["tests"][test] = result
            metrics[f"{test}_effect_size"] = result["effect_size"]
            metrics[f"{test}_p_value"] = result["p_value"]
            metrics[f"{test}_target_fill_effect_size"] = result["target_fill_effect_size"]
        return summary, metrics

    def format_report(self, summary: dict[str, Any]) -> str:
        lines = [
            "Kurita et al. 2019 (score: prior-corrected ln P(male)/P(female); "
            f"{summary['permutations']} permutations)",
            f"{'test':<22}{'X':>10}{'Y':>12}{'n':>8}{'mean X':>9}{'mean Y':>9}"
            f"{'effect':>8}{'p':>9}",
        ]
        for test, r in summary["tests"].items():
            lines.append(
                f"{test:<22}{r['attribute_x']!s:>10}{r['attribute_y']!s:>12}"
                f"{r['n_x'] + r['n_y']:>8}{r['mean_x']:>9.3f}{r['mean_y']:>9.3f}"
                f"{r['effect_size']:>8.3f}{r['p_value']:>9.4f}"
            )
        return "\n".join(lines)
