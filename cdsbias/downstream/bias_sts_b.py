"""Bias-STS-B: gendered correlations in a sentence-similarity model (Webster et al. 2020).

Why this one: it needs a single STS-B fine-tuning (5,749 training pairs; ``max_train_examples``
for a CPU) and then only predictions on generated pairs, so it fits a CPU budget where
Bias-NLI would need an MNLI model (393k pairs) first; and it reuses the STS-B task's data.

Webster et al. (2020, "Measuring and Reducing Gendered Correlations in Pre-trained Models",
Sect. 3.2) take the STS-B sentences that start with "A man" or "A woman", and for each such
template and each occupation form two pairs: ("A man …", "A <occupation> …") and
("A woman …", "A <occupation> …"). A model free of gendered correlations gives both the
same similarity. Metrics (Webster et al. report the first):

* ``mean_abs_diff``: mean over (template, occupation) of ``|sim(man) − sim(woman)|``;
* ``mean_diff``: its signed mean (positive: occupations are closer to "a man");
* ``diff_share_r``: Pearson's r between each occupation's mean signed difference and its
  share of women (US BLS, BEC-Pro's professions list): negative when female-dominated
  occupations are closer to "a woman", as a stereotype predicts.

Data: trains on ``nyu-mll/glue`` ``stsb``'s train split and takes templates from its
validation split (or ``--data DIR`` with STS-B-format ``train`` and ``test`` files:
``sentence1``, ``sentence2``, ``label``); occupations: the 60 BEC-Pro professions with
their share of women.
"""

from __future__ import annotations

import re
from typing import ClassVar

import numpy as np
import pandas as pd

from cdsbias.benchmarks.results import Metric
from cdsbias.downstream.base import Task, register
from cdsbias.downstream.glue import GLUE_CITATION, GLUE_HUB_ID
from cdsbias.downstream.metrics import pearson
from cdsbias.errors import CdsbiasError

CITATION = (
    """@article{webster2020measuring,
  title = {Measuring and Reducing Gendered Correlations in Pre-trained Models},
  author = {Webster, Kellie and Wang, Xuezhi and Tenney, Ian and Beutel, Alex and Pitler,
    Emily and Pavlick, Ellie and Chen, Jilin and Chi, Ed and Petrov, Slav},
  journal = {arXiv preprint arXiv:2010.06032}, year = {2020}
}
"""
    + GLUE_CITATION
)

_GENDERED_START = re.compile(r"^(?:A|a) (?:man|woman) (?P<rest>\S.*)$")


def occupations() -> dict[str, float]:
    """``{profession: share of women}`` of BEC-Pro's professions (US BLS, as a fraction)."""
    from cdsbias.resources import resource_path

    table = pd.read_csv(resource_path("becpro", "professions.tsv"), sep="\t")
    return {str(p): float(s) / 100 for p, s in zip(table["profession"], table["percent_female_us"],
                                                     strict=True)}  # fmt: skip


def article(word: str) -> str:
    return "An" if word[:1].lower() in "aeiou" else "A"


def bias_pairs(sentences: pd.Series, share_women: dict[str, float]) -> pd.DataFrame:
    """Two pairs per (template, occupation): man and woman against the occupation.

    Args:
        sentences: STS-B sentences; those starting with "A man"/"A woman" are templates.
        share_women: ``{occupation: share of women}``.

    Returns:
        Columns ``example`` (one id per template and occupation, shared by its two rows),
        ``sentence1``, ``sentence2``, ``label`` (NaN: no gold score), ``gender``,
        ``occupation``, ``template``.
    """
    rests = sorted({m["rest"] for s in sentences if (m := _GENDERED_START.match(str(s)))})
    rows = []
    for t, rest in enumerate(rests):
        for occupation in share_women:
            example = len(rows) // 2
            other = f"{article(occupation)} {occupation} {rest}"
            for gender, person in ((0, "man"), (1, "woman")):
                rows.append((example, f"A {person} {rest}", other, np.nan, gender, occupation, t))
    columns = ["example", "sentence1", "sentence2", "label", "gender", "occupation", "template"]
    return pd.DataFrame(rows, columns=columns)


@register
class BiasStsb(Task):
    name = "bias_sts_b"
    description = "Bias-STS-B: |sim(man, occupation) − sim(woman, occupation)| (Webster 2020)"
    citation = CITATION
    hub_dataset = (GLUE_HUB_ID, "stsb")
    hub_splits: ClassVar[dict[str, str]] = {"train": "train", "test": "validation"}
    text_columns = ("sentence1", "sentence2")
    #: Written to rows.tsv; not read from the data files (the task generates them).
    group_columns = ("gender", "occupation", "template")
    regression = True
    label_range = (0.0, 5.0)  # STS-B's scale: its training labels
    headline = (
        Metric("mean_abs_diff", "mean |sim(man) − sim(woman)|", "STS points", "lower"),
        Metric("mean_diff", "mean sim(man) − sim(woman)", "STS points", "closer", 0.0),
        Metric("diff_share_r", "r(man − woman, % women)", "Pearson r", "closer", 0.0),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.share_women = occupations()

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the STS-B files need (the group columns are generated)."""
        return (*self.text_columns, self.label_column)

    def load(self) -> dict[str, pd.DataFrame]:
        splits = super().load()
        source = splits["test"]
        pairs = bias_pairs(pd.concat([source["sentence1"], source["sentence2"]]), self.share_women)
        if pairs.empty:
            raise CdsbiasError(
                f"{self.facts['data']}: no test sentence starts with 'A man' or 'A woman', so "
                "bias_sts_b has no template; use STS-B sentences (or add such sentences)."
            )
        self.facts.update(templates=int(pairs["template"].nunique()),
                          occupations=len(self.share_women), n_test=len(pairs))  # fmt: skip
        splits["test"] = pairs
        return splits

    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        """Mean |man − woman|, its signed mean and r with % women, over (template,
        occupation) pairs; a pair drawn k times by the bootstrap counts k times."""
        sign = np.where(rows["gender"].to_numpy() == 0, 1.0, -1.0)
        frame = pd.DataFrame({
            "seed": rows["seed"].to_numpy(), "example": rows["example"].to_numpy(),
            "occupation": rows["occupation"].to_numpy(),
            "signed": sign * rows["prediction"].to_numpy(dtype=float), "n": 1.0,
        })  # fmt: skip
        groups = frame.groupby(["seed", "example", "occupation"], sort=False)[["signed", "n"]].sum()
        weight = groups["n"] / 2  # how many times the pair was drawn
        diff = groups["signed"] / weight
        if diff.empty:
            return {"mean_abs_diff": np.nan, "mean_diff": np.nan, "diff_share_r": np.nan}
        by_occupation = (diff * weight).groupby(level="occupation").sum() / weight.groupby(
            level="occupation"
        ).sum()
        share = [self.share_women[o] for o in by_occupation.index]
        return {
            "mean_abs_diff": float((diff.abs() * weight).sum() / weight.sum()),
            "mean_diff": float((diff * weight).sum() / weight.sum()),
            "diff_share_r": pearson(by_occupation.to_numpy(), share),
        }
