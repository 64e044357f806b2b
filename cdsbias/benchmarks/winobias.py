"""WinoBias as a masked-pronoun task (Zhao et al. 2018 data, GenDa Lens procedure).

Each WinoBias sentence exists in a pro-stereotypical version ("[The developer] argued with
the designer because [he] did not like the design.") and an anti-stereotypical one ("...
because [she] ..."). The gold pronoun is masked and the model's guess compared with it, as
in GenDa Lens' DaWinoBias task; the procedure, the two prediction modes (``top1``,
``choice``) and the metrics (accuracy and per-gender F1 for pro and anti, gender effect
``log2(pro / anti)``) are in :mod:`cdsbias.benchmarks.masked_pronoun`. This module adds the
English pronoun inventory: "her" is both object and possessive, so the ``choice`` slot
object/possessive compares {her} with {him, his}; subject {she} vs {he}; "hers" vs "his";
"herself" vs "himself".

References: Jieyu Zhao, Tianlu Wang, Mark Yatskar, Vicente Ordonez, Kai-Wei Chang (2018).
Gender Bias in Coreference Resolution: Evaluation and Debiasing Methods. NAACL.
Thea Rolskov Sloth, Astrid Sletten Rybner (2023). GenDa Lens
(https://github.com/DaDebias/genda-lens), ``genda_lens/lm_tasks/wino_utils.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from cdsbias.benchmarks.base import register
from cdsbias.benchmarks.masked_pronoun import (
    MaskedPronounBenchmark,
    flat_metrics,
    format_block,
    summarize_conditions,
)
from cdsbias.benchmarks.masked_pronoun_data import (
    CONDITIONS,
    PronounInventory,
    read_file,
    warn_quirks,
)

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


@dataclass
class WinoBiasOptions:
    """Options of WinoBias."""

    types: list[Literal["1", "2"]] = field(
        default_factory=lambda: ["1", "2"], metadata={"help": "WinoBias types: 1, 2 or 1,2."}
    )
    splits: list[Literal["dev", "test"]] = field(
        default_factory=lambda: ["test"], metadata={"help": "Splits: dev, test or dev,test."}
    )
    prediction: Literal["choice", "top1"] = field(
        default="choice",
        metadata={
            "help": "Headline mode: choice (forced he/she choice) or top1 (the model's top-1 "
            "token grouped by gender, GenDa Lens); both are always computed."
        },
    )
    text: Literal["original", "genda"] = field(
        default="original",
        metadata={
            "help": "original: brackets removed, casing kept; genda: lower-cased, punctuation "
            "spaced off (GenDa Lens)."
        },
    )


@register
class WinoBias(MaskedPronounBenchmark):
    """English WinoBias, masked-pronoun procedure of GenDa Lens.

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
    Options = WinoBiasOptions
    hub_dataset = ("uclanlp/wino_bias", "WinoBias")
    citation = (
        "Zhao, J., Wang, T., Yatskar, M., Ordonez, V., & Chang, K.-W. (2018). Gender Bias in "
        "Coreference Resolution: Evaluation and Debiasing Methods. NAACL 2018."
    )
    inventory = ENGLISH
    hint = (
        "winobias is English; for a Danish model use --benchmark dawinobias, otherwise "
        "evaluate an English (or multilingual) masked LM."
    )
    choice_title = "forced choice female vs male pronoun forms"

    def load(self) -> pd.DataFrame:
        frames = []
        for condition in CONDITIONS:
            for wino_type in self.options.types:
                for split in self.options.splits:
                    filename = f"{condition}_stereotyped_type{wino_type}.txt.{split}"
                    rows = read_file(
                        self._path(filename),
                        ENGLISH,
                        selection="first",
                        text_style=self.options.text,
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
            "prediction": self.options.prediction,
            "types": self.options.types,
            "splits": self.options.splits,
            **summarize_conditions(scored),
            "by_type": {},
            "rows_with_several_pronouns": int(scored["quirk"].str.contains("several").sum()),
            "rows_with_unbracketed_pronoun": int(scored["quirk"].str.contains("unbracketed").sum()),
        }
        metrics = flat_metrics(summary, self.options.prediction)
        for wino_type, part in scored.groupby("type"):
            block = summarize_conditions(part)
            summary["by_type"][f"type{wino_type}"] = block
            metrics.update(flat_metrics(block, self.options.prediction, prefix=f"type{wino_type}_"))
        return summary, metrics

    def format_report(self, summary: dict[str, Any]) -> str:
        options = self.options
        lines = [f"WinoBias (types {','.join(options.types)}; {','.join(options.splits)})"]
        lines.extend(self._mode_lines(summary))
        for name, block in summary["by_type"].items():
            lines.extend(format_block(f"{name}, {options.prediction}", block[options.prediction]))
        return "\n".join(lines)
