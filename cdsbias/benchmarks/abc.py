"""ABC: the Danish Anti-reflexive Bias Challenge, language-modelling task of GenDa Lens.

Danish has a reflexive possessive pronoun (``sin``/``sit``/``sine``) that must be used when
the possessor is the subject, so in "bibliotekaren mistede sin tegnebog" the anti-reflexive
pronouns ``hans`` (his) and ``hendes`` (her) are *ungrammatical* whatever the subject's
gender. A model without gender bias finds both equally bad. Each data item is a triple
(reflexive, ``hans``, ``hendes``) about an occupation; a sentence score ``S`` (lower =
more plausible) gives::

    relative_male   = S(hans sentence)   - S(reflexive sentence)
    relative_female = S(hendes sentence) - S(reflexive sentence)
    effect          = log2( median(relative_female) / median(relative_male) )

over all triples; > 0 means the female pronoun is found *less* plausible than the male
one (the model resists "her" more). The nuance splits the medians by the occupation's
stereotypical gender (the two GenDa Lens files: 30 female and 30 male occupations).

Two sentence scores (option ``scoring``):

``genda`` (default, comparable with GenDa Lens' published numbers)
    GenDa Lens' own "perplexity" (``genda_lens/lm_tasks/abc_utils.py``): the reflexive
    sentence is tokenized with the model's special tokens, the first token among
    ``sin sit sine ▁sin ▁sit ▁sine`` is replaced by the token ``hans`` or ``hendes``, each
    variant is run *unmasked*, and the cross-entropy is taken against the *reflexive*
    sentence's tokens at every position, [CLS] and [SEP] included::

        S(v) = exp( -(1/n) * sum_{i=0}^{n-1} ln softmax(f(x_v))[i, x_refl_i] )

    For a masked LM this is not a perplexity of the sentence (the model sees every token):
    it mostly measures how strongly the model "corrects" the shown ``hans``/``hendes`` back
    to the reflexive pronoun. It is reproduced exactly; see docs/benchmarks.md.
``pll``
    Pseudo-perplexity from the masked-LM pseudo-log-likelihood (Salazar et al. 2020, "Masked
    Language Model Scoring", ACL): each non-special token masked one at a time,
    ``S(s) = exp(-PLL(s) / N)``, for each sentence of the triple as written in the file
    (multi-piece pronouns are fine here).

References: A. V. González, M. Barrett, R. Hvingelby, K. Webster, A. Søgaard (2020). Type B
reflexivization as an unambiguous testbed for multilingual multi-task gender bias. EMNLP.
T. R. Sloth, A. S. Rybner (2023). GenDa Lens (github.com/DaDebias/genda-lens), MIT.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from cdsbias.benchmarks.abc_data import (
    ANTI_REFLEXIVES,
    FILES,
    PRONOUN_TOKENS,
    read_abc_file,
)
from cdsbias.benchmarks.base import Benchmark, Metric, register
from cdsbias.benchmarks.genda_lens_data import DATASET as GENDA_LENS
from cdsbias.benchmarks.stats import bootstrap_log2_ratio_ci, genda_rounded_log2_ratio, log2_ratio
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.language import check_language
from cdsbias.scoring.readouts import sequence_log_probs

SCORINGS = ("genda", "pll")
TOKEN_MODES = ("reference", "marked")


def _median_iqr(values: pd.Series) -> dict[str, float]:
    array = values.to_numpy(dtype=np.float64)
    q25, q75 = np.percentile(array, [25, 75]) if len(array) else (math.nan, math.nan)
    return {
        "median": float(np.median(array)) if len(array) else math.nan,
        "q25": float(q25),
        "q75": float(q75),
        "n": len(array),
    }


def _scoring_of(scored: pd.DataFrame, default: str) -> str:
    """The scoring recorded in the rows (they may come from another run), else ``default``."""
    if "scoring" in scored.columns and len(scored):
        return str(scored["scoring"].iloc[0])
    return default


@dataclass
class ABCOptions:
    """Options of ABC."""

    scoring: Literal["genda", "pll"] = field(
        default="genda",
        metadata={
            "help": "genda: GenDa Lens' unmasked cross-entropy 'perplexity'; pll: "
            "pseudo-perplexity (Salazar et al. 2020), which also scores multi-piece pronouns."
        },
    )
    tokens: Literal["reference", "marked"] = field(
        default="reference",
        metadata={
            "help": "genda scoring only. reference: the bare hans/hendes entry replaces the "
            "pronoun token even when it carries a word-start marker (as GenDa Lens); marked: "
            "keep the marker (what the model sees for the real sentence)."
        },
    )
    n_resamples: int = field(
        default=1000,
        metadata={"help": "Bootstrap resamples (over triples) of the effect's CI.", "min": 1},
    )
    seed: int = field(default=0, metadata={"help": "Seed of the bootstrap."})


@register
class ABC(Benchmark):
    """The Danish ABC language-modelling task as in GenDa Lens (see the module docstring)."""

    name = "abc"
    dataset = GENDA_LENS.name
    description = (
        "ABC (Danish, GenDa Lens): anti-reflexive hans/hendes vs reflexive sin/sit, "
        "effect log2(median rel. female / median rel. male), split by occupation gender"
    )
    languages = ("da",)
    undefined_reason = "the effect needs triples of female and male occupations"
    Options = ABCOptions
    headline = (
        Metric("effect_log2_ratio", "effect log2(median rel. female / male)", "log2 ratio",
               "closer"),
    )  # fmt: skip
    curve_title = "ABC effect (95% CI over triples)"
    curve_ylabel = "log2(median relative female / male)"
    hub_dataset = ("genda-lens/abc", "ABC (GenDa Lens, Danish)")
    unmasked_scorings: ClassVar[dict[str, str]] = {
        "genda": "every token of unmasked sentences (GenDa Lens' perplexity)"
    }
    citation = (
        "González, A. V., Barrett, M., Hvingelby, R., Webster, K., & Søgaard, A. (2020). Type "
        "B Reflexivization as an Unambiguous Testbed for Multilingual Multi-Task Gender Bias. "
        "EMNLP 2020. Sloth, T. R., & Rybner, A. S. (2023). GenDa Lens."
    )

    # ------------------------------------------------------------------ data
    def load(self) -> pd.DataFrame:
        """Both GenDa Lens files, or ``data_file`` (a folder holding them, or one file)."""
        if self.data_file is not None and self.data_file.is_dir():
            folder = self.data_file
            return pd.concat(
                [read_abc_file(folder / f, group) for group, f in FILES.items()],
                ignore_index=True,
            )
        if self.data_file is not None:
            stem = self.data_file.name.lower()
            group = "female" if "fem" in stem else "male" if "male" in stem else "all"
            return read_abc_file(self.data_file, group)
        return pd.concat(
            [read_abc_file(self.default_file(f), group) for group, f in FILES.items()],
            ignore_index=True,
        )

    # --------------------------------------------------------------- scoring
    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        """Adds ``score_reflexive``, ``score_male``, ``score_female`` and the relatives."""
        if len(rows) == 0:
            raise CdsbiasError("ABC data has no rows.")
        check_language(
            scorer, "da", self.name, alternatives=" (English models: crows_pairs, stereoset)"
        )
        out = rows.copy()
        if self.options.scoring == "genda":
            scores = self._genda_scores(scorer, out)
        else:
            scores = self._pll_scores(scorer, out)
        out["score_reflexive"], out["score_male"], out["score_female"] = scores
        out["relative_male"] = out["score_male"] - out["score_reflexive"]
        out["relative_female"] = out["score_female"] - out["score_reflexive"]
        out["scoring"] = self.options.scoring
        return out

    def _replacement_id(self, scorer: MaskedLMScorer, pronoun_token: str, word: str) -> int:
        tokenizer = scorer.tokenizer
        marker = pronoun_token[0] if pronoun_token[0] in "▁Ġ" else ""
        # Byte-level BPE always keeps its marker: GenDa Lens has no behaviour to copy there.
        keep_marker = marker == "Ġ" or (marker and self.options.tokens == "marked")
        token = marker + word if keep_marker else word
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == tokenizer.unk_token_id:
            pieces = tokenizer.tokenize(" " + word)
            raise CdsbiasError(
                f"The anti-reflexive pronoun {word!r} is not in this tokenizer's vocabulary as "
                f"the token {token!r} (the tokenizer splits it into {pieces}); GenDa Lens "
                "scoring swaps one token for another. Use --option scoring=pll, which scores "
                "multi-piece words, or a Danish model."
            )
        return int(token_id)

    def _genda_scores(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> tuple[np.ndarray, ...]:
        tokenizer = scorer.tokenizer
        marked: set[str] = set()
        inputs: list[list[int]] = []
        labels: list[list[int]] = []
        replacement: dict[tuple[str, str], int] = {}
        partial: list[str] = []
        for row in rows.itertuples(index=False):
            encoding = tokenizer(row.reflexive, return_offsets_mapping=True)
            ids = list(encoding["input_ids"])
            tokens = tokenizer.convert_ids_to_tokens(ids)
            where = next((i for i, t in enumerate(tokens) if t in PRONOUN_TOKENS), None)
            if where is None:
                raise CdsbiasError(
                    f"{row.file}:{row.line}: the reflexive pronoun of {row.reflexive!r} is not "
                    f"one token for this tokenizer ({tokens}); GenDa Lens scoring needs it as "
                    "one. Use --option scoring=pll."
                )
            # GenDa Lens swaps the first matching token even when it is only the first piece
            # of the pronoun ("sine" -> "sin" "##e" becomes "hans" "##e"); kept, but reported.
            word = re.search(rf"(?<!\w){row.pronoun}(?!\w)", row.reflexive, re.IGNORECASE)
            if word is None or tuple(encoding["offset_mapping"][where]) != word.span():
                partial.append(f"{row.file}:{row.line}")
            if self.options.tokens == "reference" and tokens[where][0] == "▁":
                marked.add(tokens[where])
            variants = [list(ids)]
            for word in (ANTI_REFLEXIVES["male"], ANTI_REFLEXIVES["female"]):
                key = (tokens[where], word)
                if key not in replacement:
                    replacement[key] = self._replacement_id(scorer, tokens[where], word)
                variant = list(ids)
                variant[where] = replacement[key]
                variants.append(variant)
            for variant in variants:
                inputs.append(variant)
                labels.append(ids)
        if partial:
            warnings.warn(
                f"ABC: in {len(partial)} sentence(s) (e.g. {partial[0]}) the swapped token is not "
                "the whole reflexive pronoun (it is split into pieces, or an earlier word "
                "starts with 'sin'/'sit'); GenDa Lens swaps it all the same, and so does "
                "cdsbias. --option scoring=pll scores the file's real hans/hendes sentences.",
                stacklevel=3,
            )
        if self.options.tokens == "reference" and marked:
            warnings.warn(
                f"ABC: the pronoun tokens {sorted(marked)} carry a word-start marker; as in "
                "GenDa Lens they are replaced by the bare 'hans'/'hendes' entries (a word-"
                "internal piece). Use --option tokens=marked to keep the marker.",
                stacklevel=3,
            )
        per_position = sequence_log_probs(scorer, inputs, labels)
        scores = np.array([math.exp(-float(np.mean(lp))) for lp in per_position])
        scores = scores.reshape(len(rows), 3)
        return scores[:, 0], scores[:, 1], scores[:, 2]

    @staticmethod
    def _pll_scores(scorer: MaskedLMScorer, rows: pd.DataFrame) -> tuple[np.ndarray, ...]:
        sequences = []
        for row in rows.itertuples(index=False):
            for text in (row.reflexive, row.anti_male, row.anti_female):
                sequences.append(scorer.encode(text))
        per_token = scorer.masked_token_log_probs(sequences)
        scores = np.array([math.exp(-float(np.mean(lp))) for lp in per_token])
        scores = scores.reshape(len(rows), 3)
        return scores[:, 0], scores[:, 1], scores[:, 2]

    # ------------------------------------------------------------ statistics
    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        """Medians (IQR) of the relative scores, the log2 effect, and the occupation split."""
        overall = {
            "female_pronoun": _median_iqr(scored["relative_female"]),
            "male_pronoun": _median_iqr(scored["relative_male"]),
        }
        median_f = overall["female_pronoun"]["median"]
        median_m = overall["male_pronoun"]["median"]
        effect = log2_ratio(median_f, median_m)
        if not math.isfinite(effect):
            warnings.warn(
                f"ABC effect size undefined: median relative scores female {median_f:.4g}, "
                f"male {median_m:.4g} do not have a positive ratio.",
                stacklevel=2,
            )
        scoring = _scoring_of(scored, self.options.scoring)
        summary: dict[str, Any] = {
            "benchmark": self.name,
            "scoring": scoring,
            "tokens": self.options.tokens if scoring == "genda" else None,
            "n_triples": len(scored),
            "effect_log2_ratio": effect,
            "effect_log2_ratio_genda_rounded": genda_rounded_log2_ratio(median_f, median_m),
            "effect_log2_ratio_ci95": list(
                bootstrap_log2_ratio_ci(
                    scored["relative_female"].to_numpy(dtype=np.float64),
                    scored["relative_male"].to_numpy(dtype=np.float64),
                    self.options.n_resamples,
                    self.options.seed,
                )
            ),
            "n_resamples": self.options.n_resamples,
            "overall": overall,
            "by_occupation_group": {},
        }
        metrics = {
            "effect_log2_ratio": effect,
            "median_relative_female": median_f,
            "median_relative_male": median_m,
        }
        for group, part in scored.groupby("occupation_group", sort=True):
            stats = {
                "female_pronoun": _median_iqr(part["relative_female"]),
                "male_pronoun": _median_iqr(part["relative_male"]),
            }
            summary["by_occupation_group"][group] = stats
            for pronoun in ("female", "male"):
                key = f"median_relative_{pronoun}_{group}_occupations"
                metrics[key] = stats[f"{pronoun}_pronoun"]["median"]
        return summary, metrics

    def curve(self, summary: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
        """The log2 effect with its bootstrap CI over triples."""
        low, high = summary["effect_log2_ratio_ci95"]
        return {"ABC log2(female/male)": (summary["effect_log2_ratio"], low, high)}

    def format_report(self, summary: dict[str, Any]) -> str:
        def cell(stats: dict[str, float]) -> str:
            return f"{stats['median']:.3f} ({stats['q25']:.3f}, {stats['q75']:.3f})"

        low, high = summary["effect_log2_ratio_ci95"]

        lines = [
            f"ABC ({summary['scoring']} scoring), {summary['n_triples']} triples",
            f"effect log2(median rel. female / median rel. male) = "
            f"{summary['effect_log2_ratio']:.3f}, 95% CI [{low:.3f}, {high:.3f}] over triples "
            f"(GenDa Lens rounding: {summary['effect_log2_ratio_genda_rounded']})",
            f"{'occupations':<12} {'hendes: median (IQR)':<30} {'hans: median (IQR)':<30}",
            f"{'all':<12} {cell(summary['overall']['female_pronoun']):<30} "
            f"{cell(summary['overall']['male_pronoun']):<30}",
        ]
        for group, stats in summary["by_occupation_group"].items():
            lines.append(
                f"{group:<12} {cell(stats['female_pronoun']):<30} {cell(stats['male_pronoun']):<30}"
            )
        return "\n".join(lines)
