"""DaWinoBias, the language-modelling task of GenDa Lens (Danish WinoBias).

The Danish translation of WinoBias type-1 sentences (Brødbæk & Koppelgaard 2021), as
packaged in GenDa Lens: 674 pro- and 674 anti-stereotypical sentences. The pronoun is
masked and the model's top-1 prediction over its whole vocabulary is grouped into
``hun/hendes`` (hun, hende, hendes), ``han/hans`` (han, ham, hans) or ``UNK``, then compared
with the gold pronoun's gender; see :mod:`cdsbias.benchmarks.masked_pronoun` for the metrics
(accuracy and per-gender F1 for pro and anti, gender effect ``log2(pro / anti)``), which
follow ``genda_lens/lm_tasks/wino_utils.py`` exactly. The ``choice`` mode (forced choice of
hun/han, hende/ham, hendes/hans in the gold pronoun's slot) is reported as well.

Reproducing GenDa Lens (``text=genda``, the default): every sentence is lower-cased and its
punctuation spaced off (GenDa Lens joins spaCy ``da_core_news_sm`` tokens with spaces;
:func:`~cdsbias.benchmarks.masked_pronoun.genda_tokens` gives the identical string on all 1,348
sentences without spaCy), the brackets are dropped and the
pronoun chosen as in its ``idx_pron`` (first of hans, hendes, han, hun, ham, hende found in
the sentence; every DaWinoBias line has exactly one pronoun, so this is the gold one, also
on line 431 where it is not bracketed). Predictions are compared case-sensitively, as the
fill-mask pipeline's ``token_str``. GenDa Lens shuffles the sentences first; the order does
not change any metric.

Data quirks handled: LF in lines 1-342 and CRLF in lines 343-674, trailing and double
spaces, and the unbracketed pronoun of line 431 in both files.

Reference: Thea Rolskov Sloth, Astrid Sletten Rybner (2023). GenDa Lens: Quantifying
Gender Bias in Danish language models. https://github.com/DaDebias/genda-lens
Data: Signe Kirk Brødbæk, Kiri Koppelgaard (2021). DaWinoBias.
https://github.com/NLP-exam/DaWinoBias
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from cdsbias.benchmarks.base import register
from cdsbias.benchmarks.genda_lens_data import DATASET as GENDA_LENS
from cdsbias.benchmarks.masked_pronoun import (
    MaskedPronounBenchmark,
    flat_metrics,
    summarize_conditions,
)
from cdsbias.benchmarks.masked_pronoun_data import (
    CONDITIONS,
    PronounInventory,
    read_file,
    warn_quirks,
)

DANISH = PronounInventory(
    language="da",
    slots={
        "subject": (("hun",), ("han",)),
        "object": (("hende",), ("ham",)),
        "possessive": (("hendes",), ("hans",)),
    },
    gold_slot={
        "hun": "subject",
        "han": "subject",
        "hende": "object",
        "ham": "object",
        "hendes": "possessive",
        "hans": "possessive",
    },
    # genda_lens/lm_tasks/wino_utils.py, idx_pron().
    priority=("hans", "hendes", "han", "hun", "ham", "hende"),
)
FILES = {
    "pro": "DaWinoBias_pro_stereotyped_evalda.txt",
    "anti": "DaWinoBias_anti_stereotyped_evalda.txt",
}


@dataclass
class DaWinoBiasOptions:
    """Options of DaWinoBias."""

    prediction: Literal["top1", "choice"] = field(
        default="top1",
        metadata={
            "help": "Headline mode: top1 (the model's top-1 token grouped hun/han, GenDa Lens) "
            "or choice (forced choice between the gold form's female and male variants)."
        },
    )
    text: Literal["genda", "original"] = field(
        default="genda",
        metadata={
            "help": "genda: lower-cased, punctuation spaced off (GenDa Lens); original: as written."
        },
    )


@register
class DaWinoBias(MaskedPronounBenchmark):
    """DaWinoBias language-modelling task of GenDa Lens.

    ``--data DIR`` points at a folder holding the two ``DaWinoBias_*_evalda.txt`` files; by
    default they come from the ``genda_lens`` dataset (``cdsbias data fetch genda_lens``).
    """

    name = "dawinobias"
    dataset = GENDA_LENS.name
    description = (
        "DaWinoBias (GenDa Lens), Danish: masked pronoun, top-1 prediction grouped "
        "hun/han vs gold; accuracy/F1 pro vs anti, log2 gender effect"
    )
    languages = ("da",)
    Options = DaWinoBiasOptions
    hub_dataset = ("genda-lens/dawinobias", "DaWinoBias (GenDa Lens)")
    citation = (
        "Sloth, T. R., & Rybner, A. S. (2023). GenDa Lens: Quantifying Gender Bias in Danish "
        "Language Models. Danish WinoBias: Brødbæk, S. K., & Koppelgaard, K. (2021)."
    )
    inventory = DANISH
    hint = (
        "dawinobias is a Danish benchmark: evaluate a Danish or multilingual masked LM, or use "
        "--benchmark winobias for an English model."
    )
    choice_title = "forced choice hun/han, hende/ham, hendes/hans"

    def load(self) -> pd.DataFrame:
        frames = []
        for condition in CONDITIONS:
            rows = read_file(
                self._path(FILES[condition]),
                DANISH,
                selection="genda",
                text_style=self.options.text,
            )
            rows.insert(0, "condition", condition)
            frames.append(rows)
        rows = pd.concat(frames, ignore_index=True)
        warn_quirks(rows, self.name)
        return rows

    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        summary: dict[str, Any] = {
            "prediction": self.options.prediction,
            "text": self.options.text,
            **summarize_conditions(scored),
            "rows_with_unbracketed_pronoun": int(scored["quirk"].str.contains("unbracketed").sum()),
        }
        return summary, flat_metrics(summary, self.options.prediction)

    def format_report(self, summary: dict[str, Any]) -> str:
        return "\n".join(
            ["DaWinoBias (GenDa Lens language-modelling task)", *self._mode_lines(summary)]
        )
