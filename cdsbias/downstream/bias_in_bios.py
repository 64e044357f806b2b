"""Bias in Bios: occupation classification from biographies (De-Arteaga et al. 2019).

Data: the hub dataset ``LabHC/bias_in_bios`` (splits ``train``/``dev``/``test``; columns
``hard_text`` — the biography without its first sentence, which names the occupation —
``profession``, an id of 28 occupations, and ``gender``, 0 male and 1 female), or
``--data DIR`` with ``train`` and ``test`` files holding those columns.

Utility: accuracy and macro-F1. Bias: per occupation ``Gap_y = TPR_female − TPR_male``
(De-Arteaga et al. 2019), its root mean square ``GAP^RMS`` (Romanov et al. 2019), and
Pearson's r between ``Gap_y`` and the share of women in occupation ``y``. The occupations
with a gap are those with ``min_group_examples`` *test examples* of each gender, counted
once on the test split, so the pooled value, its interval, each seed's value,
``per_group`` and the notes cover the same occupations whatever the number of seeds.
Published values (BERT-base, Ravfogel et al. 2020, Table 2): accuracy 0.797, ``GAP^RMS``
0.184 before INLP, 0.072 after.

The share of women is the *training split's* (after ``max_train_examples``): the gender
balance the classifier was trained on, defined alike for the hub data and for ``--data
DIR`` (which has no dev split). The INLP authors' notebooks (nullspace_projection,
``notebooks/biasbios_bert.ipynb``) count train + dev + test instead
(``count_profs_and_gender(train+dev+test)``). On the hub data, the INLP authors' split, the
two agree to rounding: ``src/data/create_dataset_biasbios.py`` splits every (occupation,
gender) cell 65/10/25 on its own. They differ with ``max_train_examples`` (a sample) or a
``--data`` split of a user's own.

``scrub: true`` deletes what the English CDS rules would substitute (:func:`scrub`): the
eleven words of De-Arteaga et al.'s scrubbing (he, she, her, his, him, hers, himself,
herself, mr, mrs, ms: microsoft/biosbias, ``preprocess.py``), the other gendered words of
``gendered_word_pairs.tsv`` in the directions the list gives them, titles before a name,
and the given names of ``name_pairs.tsv`` where the name rules take them for a given name.
De-Arteaga et al. also delete the person's own first, middle and last names, which the hub
data does not hold, and write ``_`` where cdsbias deletes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import ClassVar

import pandas as pd

from cdsbias.benchmarks.results import Metric
from cdsbias.cds.edits import Edit
from cdsbias.downstream.base import Task, TaskOptions, register
from cdsbias.downstream.metrics import (
    GapOccupations,
    TprGaps,
    accuracy,
    gap_share_correlation,
    macro_f1,
    occupations_with_both_genders,
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
def _english():
    """The English CDS rules (word pairs with their directions, given names with the
    ambiguous-names list), built once: scrubbing deletes what they would substitute."""
    from cdsbias.cds.engine import English

    return English()


# A capitalised word after a gendered word, optionally behind "'s" or " & ".
_NEXT_CAPITALISED = re.compile(r"(?:['’]s)?(?: | & )(?P<word>[A-Z][^\W\d_]*)")


def _opens_a_place_name(text: str, end: int) -> bool:
    """Whether the capitalised words right after ``text[:end]`` end in a place or
    organisation word within three words ("Duke University", "King's College", "Count Basie
    Theatre", "Boys & Girls Club"): the gendered word names an institution, not a person."""
    from cdsbias.cds.engine import PLACE_HEADS

    position = end
    for _ in range(3):
        match = _NEXT_CAPITALISED.match(text, position)
        if match is None:
            return False
        if match.group("word") in PLACE_HEADS:
            return True
        position = match.end()
    return False


def deleted_spans(text: str) -> list[Edit]:
    """The spans :func:`scrub` deletes from ``text`` (the English rules' edits, less the
    gendered words and names that open an institution's name)."""
    english = _english()
    return [
        edit
        for edit in english.edits(text)
        if not (
            edit.original[:1].isupper()
            # A pronoun never names an institution: "His Harvard Law School classmates".
            and edit.kind != "pronoun"
            and edit.original.lower() not in english.marker_words
            and _opens_a_place_name(text, edit.end)
        )
    ]


def scrub(text: str) -> str:
    """``text`` without the gendered words and given names the English CDS rules find.

    Deleted: every word the English rules would substitute: pronouns (*he, she, him, his,
    her, hers, himself, herself*), *Mr/Mrs/Ms* (not upper-case *MS*, a degree), the other
    gendered words of ``gendered_word_pairs.tsv`` in the directions the list gives them
    (*hostess* but not *host*, *god* but not *God*), titles before a name (*Lady, Sir,
    Miss*) and first names of ``name_pairs.tsv`` where the rules take them for a given
    name (not *May 2015*, *University of Virginia*, *Dean of Medicine*: the names of
    ``ambiguous_given_names.tsv`` are names only in a full name). Kept: a capitalised
    gendered word or name that opens an institution's name (*Duke University*, *King's
    College*). Runs of spaces left behind are collapsed.
    """
    pieces, keep_from = [], 0
    for edit in deleted_spans(text):
        pieces.append(text[keep_from : edit.start])
        keep_from = edit.end
    pieces.append(text[keep_from:])
    return re.sub(r"\s{2,}", " ", "".join(pieces)).strip()


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
        #: The occupations with a TPR gap, counted on the test split (set by :meth:`load`).
        self.gap_occupations: GapOccupations | None = None

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
        train, test = splits["train"], splits["test"]
        self.share_women = share_of_women(train["profession"], train["gender"])
        self.facts["share_women_from"] = "train split"
        # Counted once on the test examples, so the pooled statistics, their bootstrap, each
        # seed's values, per_group and the notes all cover the same occupations, whatever
        # the number of seeds (a pooled count of rows would grow with it).
        self.gap_occupations = occupations_with_both_genders(
            test["profession"], test["gender"], min_examples=self.options.min_group_examples
        )
        self.facts["tpr_gap_occupations"] = len(self.gap_occupations.kept)
        return splits

    def _gaps(self, rows: pd.DataFrame) -> TprGaps:
        """The TPR gaps of ``rows`` over the occupations :meth:`load` kept (a bootstrap
        resample without an example of a gender has no gap for that occupation)."""
        if self.gap_occupations is None:
            raise RuntimeError(f"{self.name}: call load() before scoring rows.")
        return tpr_gaps(
            rows["profession"].to_numpy(),
            rows["prediction"].to_numpy(),
            rows["gender"].to_numpy(),
            occupations=self.gap_occupations.kept,
        )

    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        """Accuracy, macro-F1, ``GAP^RMS`` and r(gap, share of women) of ``rows``."""
        labels, predictions = rows["profession"].to_numpy(), rows["prediction"].to_numpy()
        gaps = self._gaps(rows)
        return {
            "accuracy": accuracy(labels, predictions),
            "macro_f1": macro_f1(labels, predictions),
            "tpr_gap_rms": gaps.rms,
            "tpr_gap_share_r": gap_share_correlation(gaps.gaps, self.share_women),
        }

    def per_group(self, rows: pd.DataFrame) -> dict[str, dict[str, float]]:
        """Each occupation's TPR gap and share of women (for the report and card)."""
        return {
            str(o): {"tpr_gap": gap, "share_women": self.share_women.get(o, float("nan"))}
            for o, gap in sorted(self._gaps(rows).gaps.items())
        }

    def notes(self, rows: pd.DataFrame) -> list[str]:
        """The occupations left out of the TPR gap, with their test examples per gender."""
        left_out = self.gap_occupations.left_out if self.gap_occupations else {}
        if not left_out:
            return []
        listed = ", ".join(f"{o} ({m} male, {f} female)" for o, (m, f) in left_out.items())
        return [
            f"{len(left_out)} occupation(s) left out of the TPR gap, fewer than "
            f"{self.options.min_group_examples} test examples of a gender: {listed}; "
            "lower min_group_examples or score more test examples."
        ]
