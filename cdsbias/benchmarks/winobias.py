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
from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset

#: WinoBias (Zhao et al. 2018): one upstream commit, one sha256 per file (computed from
#: the files in shared/data). ``cdsbias data fetch winobias``.
DATASET = register_dataset(
    DatasetSpec(
        name="winobias",
        folder="winobias",
        licence="MIT",
        repository="uclanlp/corefBias",
        commit="0bce984dd081bbc10b0622f326727a024c607895",
        files=(
            DataFile(
                "anti_stereotyped_type1.txt.dev",
                "WinoBias/wino/data/anti_stereotyped_type1.txt.dev",
                "a4e0ebae344e78b56f657a42e8ae684b9db7747d177c5e7149c0907ebb7f3bf6",
            ),
            DataFile(
                "anti_stereotyped_type1.txt.test",
                "WinoBias/wino/data/anti_stereotyped_type1.txt.test",
                "331db5bd74bfefebf146a60b67645152a4a1991570d2a56f57154103ac361dd2",
            ),
            DataFile(
                "anti_stereotyped_type2.txt.dev",
                "WinoBias/wino/data/anti_stereotyped_type2.txt.dev",
                "763ad829ad724f9a85ead689ba8ca69072020cb1238def6210f0fc6a47b97e59",
            ),
            DataFile(
                "anti_stereotyped_type2.txt.test",
                "WinoBias/wino/data/anti_stereotyped_type2.txt.test",
                "336571ac1ea8c06cd2aba8e5dd2bd98e00acc0c48da3e4ec5ec7e54eb2633a8f",
            ),
            DataFile(
                "pro_stereotyped_type1.txt.dev",
                "WinoBias/wino/data/pro_stereotyped_type1.txt.dev",
                "dd55a0d220fe4c0ceb63dd4648223fb4fe1a58d5ad95c116a002ad24b0e292a5",
            ),
            DataFile(
                "pro_stereotyped_type1.txt.test",
                "WinoBias/wino/data/pro_stereotyped_type1.txt.test",
                "db7838907238a758eeb5779e48f38c013b892910d6fe864456c59f04245c6689",
            ),
            DataFile(
                "pro_stereotyped_type2.txt.dev",
                "WinoBias/wino/data/pro_stereotyped_type2.txt.dev",
                "8f0250de723cea9328e3eaf7169e07936f01aa5909ce7aa580db66eb803f4e86",
            ),
            DataFile(
                "pro_stereotyped_type2.txt.test",
                "WinoBias/wino/data/pro_stereotyped_type2.txt.test",
                "ea1c1fd94fa612e3cc44d7fa3cc4cb76021bb63fdf94f9826f430051e9052438",
            ),
            DataFile(
                "female_occupations.txt",
                "WinoBias/wino/data/female_occupations.txt",
                "693bff12286c2c1d46c7d4d45a44a631574710c30b39c1a3001bb7bdebb44ed8",
            ),
            DataFile(
                "male_occupations.txt",
                "WinoBias/wino/data/male_occupations.txt",
                "6b82d88847b69d56d207a0c396e9830b031890de585e916e6b4e9bc50672657e",
            ),
            DataFile(
                "generalized_swaps.txt",
                "WinoBias/wino/generalized_swaps.txt",
                "4d093db96d4386318ec9aafc3cebc458ead06bb02ac81770e278905fbdd4341e",
            ),
            DataFile(
                "extra_gendered_words.txt",
                "WinoBias/wino/extra_gendered_words.txt",
                "728554ebab711703e37dc92d9d14acde6e5bfcc28fa5b62b90b34110be7bd854",
            ),
        ),
    )
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
