"""Bias in Bios: occupation classification from biographies (De-Arteaga et al. 2019).

Data: the hub dataset ``LabHC/bias_in_bios`` (splits ``train``/``dev``/``test``; columns
``hard_text`` — the biography without its first sentence, which names the occupation —
``profession``, an id of 28 occupations, and ``gender``, 0 male and 1 female), or
``--data DIR`` with ``train`` and ``test`` files holding those columns.

Utility: accuracy and macro-F1. Bias: per occupation ``Gap_y = TPR_female − TPR_male``
(De-Arteaga et al. 2019), its root mean square ``GAP^RMS`` (Romanov et al. 2019), and
Pearson's r between ``Gap_y`` and the share of women in occupation ``y`` of the *training*
split (as Ravfogel et al. 2020 compute it in nullspace_projection's Bias in Bios notebook).
Published values (BERT-base, Ravfogel et al. 2020, Table 2): accuracy 0.797, ``GAP^RMS``
0.184 before INLP, 0.072 after.

``scrub: true`` removes first names and gendered words (pronouns, the word pairs of
``gendered_word_pairs.tsv``, the names of ``name_pairs.tsv``) from the text, the
"scrubbed" setting of De-Arteaga et al. (2019, Sect. 4).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import ClassVar

import pandas as pd

from cdsbias.benchmarks.results import Metric
from cdsbias.downstream.base import Task, TaskOptions, register
from cdsbias.downstream.metrics import (
    accuracy,
    gap_share_correlation,
    macro_f1,
    share_of_women,
    tpr_gaps,
)
from cdsbias.errors import CdsbiasError, shown

CITATION = """@inproceedings{dearteaga2019bias,
  title = {Bias in Bios: A Case Study of Semantic Representation Bias in a High-Stakes Setting},
  author = {De-Arteaga, Maria and Romanov, Alexey and Wallach, Hanna and Chayes, Jennifer and
    Borgs, Christian and Chouldechova, Alexandra and Geyik, Sahin and Kenthapadi, Krishnaram and
    Kalai, Adam Tauman},
  booktitle = {Proceedings of the Conference on Fairness, Accountability, and Transparency},
  year = {2019}, pages = {120--128}
}
@inproceedings{romanov2019whats,
  title = {What's in a Name? {R}educing Bias in Bios without Access to Protected Attributes},
  author = {Romanov, Alexey and De-Arteaga, Maria and Wallach, Hanna and Chayes, Jennifer and
    Borgs, Christian and Chouldechova, Alexandra and Geyik, Sahin and Kenthapadi, Krishnaram and
    Rumshisky, Anna and Kalai, Adam},
  booktitle = {Proceedings of NAACL-HLT}, year = {2019}, pages = {4187--4195}
}"""


@dataclass
class BiasInBiosOptions(TaskOptions):
    """Bias in Bios options."""

    scrub: bool = field(
        default=False,
        metadata={"help": "remove first names and gendered words from the biographies "
                  "(De-Arteaga et al.'s scrubbed setting)"},
    )  # fmt: skip
    min_group_examples: int = field(
        default=5,
        metadata={"help": "test examples of each gender an occupation needs for its TPR gap; "
                  "occupations with fewer are left out (warned and counted)", "min": 1},
    )  # fmt: skip


@functools.cache
def _scrub_pattern() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(gendered words, case-insensitive; first names, capitalised) as regexes."""
    from cdsbias.cds.wordlists import load_name_pairs, load_word_pairs, resource_path

    word_map, _, _ = load_word_pairs()
    words = set(word_map) | set(word_map.values())
    for name in ("pronouns_male.txt", "pronouns_female.txt"):
        lines = resource_path(name).read_text(encoding="utf-8").splitlines()
        words |= {w.strip() for w in lines if w.strip() and not w.startswith("#")}
    names = set(load_name_pairs())

    def alternation(items: set[str]) -> str:
        return "|".join(re.escape(w) for w in sorted(items, key=len, reverse=True))

    return (
        re.compile(rf"\b(?:{alternation(words)})\b", re.IGNORECASE),
        re.compile(rf"\b(?:{alternation(names)})\b"),
    )


def scrub(text: str) -> str:
    """``text`` without gendered words and first names (spaces collapsed)."""
    words, names = _scrub_pattern()
    text = names.sub("", words.sub("", text))
    return re.sub(r"\s{2,}", " ", text).strip()


@register
class BiasInBios(Task):
    name = "bias_in_bios"
    description = "occupation from biographies: accuracy, macro-F1, TPR gap (De-Arteaga 2019)"
    citation = CITATION
    hub_dataset = ("LabHC/bias_in_bios", None)
    hub_splits: ClassVar[dict[str, str]] = {"train": "train", "test": "test"}
    text_columns = ("hard_text",)
    label_column = "profession"
    group_columns = ("gender",)
    headline = (
        Metric("accuracy", "accuracy", "share", "higher"),
        Metric("macro_f1", "macro-F1", "F1", "higher"),
        Metric("tpr_gap_rms", "TPR gap RMS (female − male)", "TPR", "lower"),
        Metric("tpr_gap_share_r", "r(TPR gap, % women)", "Pearson r", "closer", 0.0),
    )
    Options = BiasInBiosOptions

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: ``{occupation: share of women}`` of the training split (set by :meth:`load`).
        self.share_women: dict[int, float] = {}

    def check_frame(self, frame: pd.DataFrame, where: str) -> None:
        super().check_frame(frame, where)
        bad = sorted(set(frame["gender"].unique()) - {0, 1})
        if bad:
            raise CdsbiasError(
                f"{where}: column 'gender' must be 0 (male) or 1 (female), got {shown(bad[0])!r}."
            )

    def prepare(self, frame: pd.DataFrame) -> pd.DataFrame:
        if self.options.scrub:
            frame = frame.assign(hard_text=frame["hard_text"].map(scrub))
        return frame

    def load(self) -> dict[str, pd.DataFrame]:
        splits = super().load()
        train = splits["train"]
        self.share_women = share_of_women(train["profession"], train["gender"])
        self.facts["share_women_from"] = "train split"
        return splits

    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        """Accuracy, macro-F1, ``GAP^RMS`` and r(gap, share of women) of ``rows``."""
        labels, predictions = rows["profession"].to_numpy(), rows["prediction"].to_numpy()
        gaps = tpr_gaps(
            labels, predictions, rows["gender"].to_numpy(),
            min_examples=self.options.min_group_examples,
        )  # fmt: skip
        return {
            "accuracy": accuracy(labels, predictions),
            "macro_f1": macro_f1(labels, predictions),
            "tpr_gap_rms": gaps.rms,
            "tpr_gap_share_r": gap_share_correlation(gaps.gaps, self.share_women),
        }

    def per_group(self, rows: pd.DataFrame) -> dict[str, dict[str, float]]:
        """Each occupation's TPR gap and share of women (for the report and card)."""
        gaps = tpr_gaps(rows["profession"], rows["prediction"], rows["gender"],
                        min_examples=self.options.min_group_examples)  # fmt: skip
        return {
            str(o): {"tpr_gap": gap, "share_women": self.share_women.get(o, float("nan"))}
            for o, gap in sorted(gaps.gaps.items())
        }

    def notes(self, rows: pd.DataFrame) -> list[str]:
        first_seed = rows[rows["seed"] == rows["seed"].min()]
        gaps = tpr_gaps(first_seed["profession"], first_seed["prediction"], first_seed["gender"],
                        min_examples=self.options.min_group_examples)  # fmt: skip
        if not gaps.left_out:
            return []
        listed = ", ".join(f"{o} ({m} male, {f} female)" for o, (m, f) in gaps.left_out.items())
        return [
            f"{len(gaps.left_out)} occupation(s) left out of the TPR gap, fewer than "
            f"{self.options.min_group_examples} test examples of a gender: {listed}; "
            "lower min_group_examples or score more test examples."
        ]
