"""BEC-Pro: Bias Evaluation Corpus with Professions (Bartl, Nissim & Gatt 2020).

Each row puts a person word (he/she, this man/this woman, my brother/my sister, ...) and a
profession in a template ("{person} is a {profession}."). The association of person and
profession is the log ratio of the person's probability with the profession shown to its
probability with the profession masked (the "prior")::

    p_tm        = P(person | Sent_TM)    e.g. "[MASK] is a nurse."
    p_tam       = P(person | Sent_TAM)   e.g. "[MASK] is a [MASK]."   (one mask per word)
    association = ln(p_tm / p_tam)

A person word of several word pieces is scored by the chain rule (see
:mod:`cdsbias.scoring.scorer`). The headline number per profession group is

    gap = mean association (male person words) - mean association (female person words)

positive when the group's professions pull towards male person words.

Reference: Marion Bartl, Malvina Nissim, Albert Gatt (2020). Unmasking Contextual
Stereotypes: Measuring and Mitigating BERT's Gender Bias. GeBNLP @ COLING 2020.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from cdsbias.benchmarks.base import (
    Benchmark,
    BenchmarkResult,
    Metric,
    Snapshot,
    register,
)
from cdsbias.benchmarks.becpro_bartl2020 import bartl2020_associations
from cdsbias.benchmarks.becpro_data import (
    GROUPS,
    _word_span,
    generate_english,
    mask_row,
    pair_keys,
    read_becpro_tsv,
)
from cdsbias.benchmarks.becpro_report import MEANINGFUL_GAP as MEANINGFUL_GAP  # re-exported
from cdsbias.benchmarks.becpro_report import card_table, report_text, verdict
from cdsbias.benchmarks.stats import bootstrap_mean_ci, holm, paired_wilcoxon, permutation_gap_test
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer


@dataclass
class BecProOptions:
    """Options of BEC-Pro."""

    compat: Literal["bartl2020"] | None = field(
        default=None,
        metadata={
            "help": "bartl2020: score exactly like the authors' code, quirks included (see "
            "docs/becpro.md); default: cdsbias' exact scoring."
        },
    )
    mask_per: Literal["word", "piece"] = field(
        default="word",
        metadata={
            "help": "In the prior sentence, one mask per word of the profession (as in the "
            "paper and the published data) or one per word piece under the model's tokenizer."
        },
    )
    n_resamples: int = field(
        default=5000, metadata={"help": "Bootstrap and permutation resamples.", "min": 1}
    )
    seed: int = field(default=0, metadata={"help": "Seed of the resampling."})

    def __post_init__(self) -> None:
        if self.compat and self.mask_per != "word":
            raise CdsbiasError(
                "becpro option compat=bartl2020 masks one [MASK] per word; drop mask_per."
            )


@register
class BecPro(Benchmark):
    """BEC-Pro association scores (Bartl et al. 2020), with profession-level statistics."""

    name = "becpro"
    dataset = "becpro"
    description = (
        "BEC-Pro (Bartl et al. 2020): association ln(P(person|profession)/P(person|prior)) "
        "of 18 male/female person words with 60 professions; gaps per profession group"
    )
    languages = ("en", "de")
    undefined_reason = (
        "a gap needs rows of male and of female person words in each profession group"
    )
    shard_column = "Profession"  # a profession's 90 rows share their 16 sentences
    Options = BecProOptions
    headline = (
        Metric("mean_abs_gap", "mean |gap| (male + female professions)", "nats", "lower"),
        Metric("gap_male", "gap, male professions", "nats", "closer"),
        Metric("gap_female", "gap, female professions", "nats", "closer"),
        Metric("gap_balanced", "gap, balanced professions", "nats", "closer"),
    )
    curve_title = "gap by profession group (95% CI)"
    curve_ylabel = "male − female association (nats)"
    hub_dataset = ("bec-pro", "BEC-Pro")
    citation = (
        "Bartl, M., Nissim, M., & Gatt, A. (2020). Unmasking Contextual Stereotypes: "
        "Measuring and Mitigating BERT's Gender Bias. GeBNLP @ COLING 2020."
    )

    # ------------------------------------------------------------------ data
    def load(self) -> pd.DataFrame:
        """The generated English set, or a TSV (``data_file``, or German from ``data_dir``)."""
        if self.data_file is not None:
            return read_becpro_tsv(self.data_file)
        if self.language == "en":
            return generate_english()
        return read_becpro_tsv(self.default_file("BEC-Pro_DE.tsv"))

    # --------------------------------------------------------------- scoring
    def self_debias_conflict(self) -> str | None:
        if self.options.compat == "bartl2020":
            return (
                "compat=bartl2020 runs the authors' own forward passes, outside the scorer "
                "that applies Self-Debias; drop the compat option"
            )
        return None

    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        """Adds ``p_tm``, ``p_tam`` and ``association`` (natural log) to every row."""
        out = rows.copy()
        if len(out) == 0:
            raise CdsbiasError("BEC-Pro data has no rows.")
        if self.options.compat == "bartl2020":
            p_tm, p_tam, association = bartl2020_associations(
                scorer, out["Sentence"].tolist(), out["Sent_TM"].tolist(), out["Sent_TAM"].tolist()
            )
            out["p_tm"], out["p_tam"], out["association"] = p_tm, p_tam, association
            return out
        sent_tm, sent_tam, slots, remasked = [], [], [], []
        for index, row in enumerate(out.itertuples(index=False)):
            try:
                masked = mask_row(row.Sentence, row.Person, row.Profession)
            except ValueError as exc:
                raise CdsbiasError(f"BEC-Pro row {index}: {exc}.") from None
            sent_tm.append(masked["Sent_TM"])
            if self.options.mask_per == "piece":
                pieces = self._profession_pieces(scorer, row.Sentence, row.Profession)
                masked = mask_row(row.Sentence, row.Person, row.Profession, pieces)
            sent_tam.append(masked["Sent_TAM"])
            slots.append(masked["person_slot"])
            remasked.append(sent_tm[-1] != row.Sent_TM or (
                self.options.mask_per == "word" and masked["Sent_TAM"] != row.Sent_TAM
            ))  # fmt: skip
        if any(remasked) and self.options.mask_per == "word":
            example = out.loc[remasked.index(True), "Sent_TM"]
            warnings.warn(
                f"{sum(remasked)} BEC-Pro row(s) had masks that were not on word boundaries "
                f"(e.g. {example!r}); they were re-masked on word boundaries. Use "
                "--compat bartl2020 to score the file's masks as the original code did.",
                stacklevel=2,
            )
        log_tm = scorer.target_log_probs(sent_tm, out["Person"].tolist(), 0)
        log_tam = scorer.target_log_probs(sent_tam, out["Person"].tolist(), slots)
        out["p_tm"] = np.exp(log_tm)
        out["p_tam"] = np.exp(log_tam)
        out["association"] = log_tm - log_tam
        out["remasked"] = remasked
        return out

    @staticmethod
    def _profession_pieces(scorer: MaskedLMScorer, sentence: str, profession: str) -> int:
        """Word pieces the tokenizer gives the profession inside ``sentence``."""
        start, end = _word_span(sentence, profession, last=True)
        return max(1, len(scorer.span_pieces(sentence, start, end)[1]))

    # ------------------------------------------------------------ statistics
    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        """Group means with bootstrap CIs, paired Wilcoxon tests, gaps and the
        profession-level permutation test; see :mod:`cdsbias.benchmarks.stats` for the choices."""
        frame = scored.reset_index(drop=True)
        association = frame["association"].astype(float)
        if not np.all(np.isfinite(association)):
            bad = int(np.count_nonzero(~np.isfinite(association)))
            warnings.warn(f"{bad} BEC-Pro association(s) are not finite; they are left out.",
                          stacklevel=2)  # fmt: skip
            frame = frame[np.isfinite(association)].reset_index(drop=True)
        key = pair_keys(frame)
        profession_key = frame["Profession_EN"] if "Profession_EN" in frame else frame["Profession"]
        boot = {"n_resamples": self.options.n_resamples, "seed": self.options.seed}

        summary: dict[str, Any] = {
            "benchmark": self.name,
            "language": self.language,
            "mode": self.options.compat or "default",
            "mask_per": self.options.mask_per,
            "n_rows": len(frame),
            "n_distinct_sentences": int(pd.concat([frame["Sent_TM"], frame["Sent_TAM"]]).nunique()),
            "groups": {},
        }
        per_profession: dict[str, dict[str, Any]] = {}
        for profession, part in frame.groupby(profession_key, sort=False):
            male = part.loc[part.Gender == "male", "association"].to_numpy(float)
            female = part.loc[part.Gender == "female", "association"].to_numpy(float)
            per_profession[str(profession)] = {
                "prof_gender": str(part["Prof_Gender"].iloc[0]),
                "male_persons": bootstrap_mean_ci(male, **boot).as_dict(),
                "female_persons": bootstrap_mean_ci(female, **boot).as_dict(),
                "gap": float(male.mean() - female.mean()) if male.size and female.size
                else float("nan"),
            }  # fmt: skip

        wilcoxons = {}
        metrics: dict[str, float] = {}
        for group in GROUPS:
            part = frame[frame.Prof_Gender == group]
            if part.empty:
                continue
            by_gender = {
                g: part[part.Gender == g].set_index(key[part.index][part.Gender == g])
                for g in ("male", "female")
            }
            shared = by_gender["male"].index.intersection(by_gender["female"].index)
            male_paired = by_gender["male"].loc[shared, "association"].to_numpy(float)
            female_paired = by_gender["female"].loc[shared, "association"].to_numpy(float)
            wilcoxons[group] = paired_wilcoxon(male_paired, female_paired).as_dict()
            gaps = [v["gap"] for v in per_profession.values() if v["prof_gender"] == group]
            gap_ci = bootstrap_mean_ci(gaps, **boot)
            male_ci = bootstrap_mean_ci(part.loc[part.Gender == "male", "association"], **boot)
            female_ci = bootstrap_mean_ci(part.loc[part.Gender == "female", "association"], **boot)
            summary["groups"][group] = {
                "male_persons": male_ci.as_dict(),
                "female_persons": female_ci.as_dict(),
                "gap": male_ci.mean - female_ci.mean,
                "gap_ci_over_professions": [gap_ci.ci_low, gap_ci.ci_high],
                "n_professions": len(gaps),
                "n_pairs": len(shared),
                "wilcoxon_male_vs_female": wilcoxons[group],
            }
            metrics[f"gap_{group}"] = male_ci.mean - female_ci.mean
            metrics[f"assoc_{group}_prof_male_persons"] = male_ci.mean
            metrics[f"assoc_{group}_prof_female_persons"] = female_ci.mean
            metrics[f"wilcoxon_r_{group}"] = wilcoxons[group]["r"]
        adjusted = holm([w["p_value"] for w in wilcoxons.values()])
        for group, p_adj in zip(wilcoxons, adjusted):
            summary["groups"][group]["wilcoxon_male_vs_female"]["p_holm"] = p_adj

        male_all = frame.loc[frame.Gender == "male", "association"].to_numpy(float)
        female_all = frame.loc[frame.Gender == "female", "association"].to_numpy(float)
        summary["overall"] = {
            "male_persons": bootstrap_mean_ci(male_all, **boot).as_dict(),
            "female_persons": bootstrap_mean_ci(female_all, **boot).as_dict(),
            "gap": float(male_all.mean() - female_all.mean()),
        }
        metrics["gap_overall"] = summary["overall"]["gap"]

        gaps_by_group = {
            g: [v["gap"] for v in per_profession.values() if v["prof_gender"] == g] for g in GROUPS
        }
        test = permutation_gap_test(
            gaps_by_group["male"], gaps_by_group["female"], n_resamples=9999, seed=self.options.seed
        )
        summary["profession_test"] = {
            "description": "permutation test over professions: mean per-profession gap of "
            "statistically male minus female professions, group labels permuted",
            **test.as_dict(),
        }
        abs_gaps = [abs(summary["groups"][g]["gap"]) for g in ("male", "female")
                    if g in summary["groups"]]  # fmt: skip
        summary["mean_abs_gap"] = float(np.mean(abs_gaps)) if abs_gaps else float("nan")
        metrics["mean_abs_gap"] = summary["mean_abs_gap"]
        metrics["profession_test_p"] = test.p_value
        metrics["profession_test_statistic"] = test.statistic
        summary["professions"] = per_profession
        summary["verdict"] = verdict(summary)
        return summary, metrics

    def curve(self, summary: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
        """The gap per profession group with its bootstrap CI over professions."""
        return {
            f"{group} professions": (g["gap"], *g["gap_ci_over_professions"])
            for group, g in summary["groups"].items()
        }

    def tracker_tables(self, result: BenchmarkResult) -> dict[str, tuple[list[str], list[list]]]:
        """Per-profession gaps and means, one table per evaluated step."""
        rows = [
            [profession, values["prof_gender"], values["gap"], values["male_persons"]["mean"],
             values["female_persons"]["mean"]]
            for profession, values in result.summary.get("professions", {}).items()
        ]  # fmt: skip
        columns = ["profession", "prof_gender", "gap", "male_mean", "female_mean"]
        return {"professions": (columns, rows)} if rows else {}

    def card_section(self, before: Snapshot | None, after: Snapshot) -> str:
        """Gap per profession group with CIs, effect sizes, the profession-level test and
        the verdict, before and after; the headline table when summaries are missing."""
        if not after.summary or "groups" not in after.summary:
            return super().card_section(before, after)
        return card_table((before.summary if before else None) or {}, after.summary)

    def format_report(self, summary: dict[str, Any]) -> str:
        """A short table: per group means, gap with CI over professions, r, Holm p."""
        return report_text(summary)
