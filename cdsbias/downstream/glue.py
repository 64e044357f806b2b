"""GLUE tasks as bias-bench fine-tunes them: utility beside a debiased model's bias.

Meade et al. (2022, "An Empirical Survey of the Effectiveness of Debiasing Techniques for
Pre-trained Language Models", ACL, Table 9) fine-tune every debiased model on GLUE with
``experiments/run_glue.py`` (learning rate 2e-5, 3 epochs, batch 32, sequence length
128; their README) and report each task's standard metric on its validation split; the
hub test splits hide their labels. One module holds the GLUE family: the tasks differ
only in columns and metric.

Data: the hub dataset ``nyu-mll/glue`` (the id the hub lists since the canonical
datasets moved under organisations; ``glue`` redirects there; config = the task's name;
``train`` for training, ``validation`` scored), or ``--data DIR`` with ``train`` and
``test`` files holding the hub's columns. Metrics (Wang et al. 2019): SST-2 and RTE
accuracy; MRPC F1 and accuracy; STS-B Pearson and Spearman correlation; CoLA Matthews
correlation.
"""

from __future__ import annotations

from typing import ClassVar

import pandas as pd

from cdsbias.benchmarks.results import Metric
from cdsbias.downstream.base import Task, register
from cdsbias.downstream.metrics import accuracy, binary_f1, matthews, pearson, spearman

GLUE_CITATION = """@inproceedings{wang2019glue,
  title = {{GLUE}: A Multi-Task Benchmark and Analysis Platform for Natural Language
    Understanding},
  author = {Wang, Alex and Singh, Amanpreet and Michael, Julian and Hill, Felix and
    Levy, Omer and Bowman, Samuel R.},
  booktitle = {International Conference on Learning Representations}, year = {2019}
}
@inproceedings{meade2022empirical,
  title = {An Empirical Survey of the Effectiveness of Debiasing Techniques for Pre-trained
    Language Models},
  author = {Meade, Nicholas and Poole-Dayan, Elinor and Reddy, Siva},
  booktitle = {Proceedings of ACL}, year = {2022}, pages = {1878--1898}
}"""

#: The GLUE dataset on the hub (its ``glue.py`` features: the text columns as strings,
#: ``label`` a ClassLabel or STS-B's float32, ``idx`` int32; tests/test_downstream_hub.py).
GLUE_HUB_ID = "nyu-mll/glue"

ACCURACY = Metric("accuracy", "accuracy", "share", "higher")


class GlueTask(Task):
    """A GLUE task: the hub's ``nyu-mll/glue`` ``<name>`` config, its validation split scored."""

    citation = GLUE_CITATION
    hub_splits: ClassVar[dict[str, str]] = {"train": "train", "test": "validation"}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.hub_dataset = (GLUE_HUB_ID, cls.name)

    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        return {"accuracy": accuracy(rows["label"], rows["prediction"])}


@register
class Sst2(GlueTask):
    name = "sst2"
    description = "GLUE SST-2: sentence sentiment, accuracy (Socher et al. 2013)"
    text_columns = ("sentence",)
    headline = (ACCURACY,)


@register
class Rte(GlueTask):
    name = "rte"
    description = "GLUE RTE: textual entailment, accuracy"
    text_columns = ("sentence1", "sentence2")
    headline = (ACCURACY,)


@register
class Mrpc(GlueTask):
    name = "mrpc"
    description = "GLUE MRPC: paraphrase, F1 and accuracy (Dolan and Brockett 2005)"
    text_columns = ("sentence1", "sentence2")
    headline = (Metric("f1", "F1 (paraphrase)", "F1", "higher"), ACCURACY)

    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        labels, predictions = rows["label"], rows["prediction"]
        return {"f1": binary_f1(labels, predictions), "accuracy": accuracy(labels, predictions)}


@register
class Cola(GlueTask):
    name = "cola"
    description = "GLUE CoLA: grammatical acceptability, Matthews correlation (Warstadt 2019)"
    text_columns = ("sentence",)
    headline = (Metric("matthews", "Matthews correlation", "MCC", "higher"),)

    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        return {"matthews": matthews(rows["label"], rows["prediction"])}


@register
class Stsb(GlueTask):
    name = "stsb"
    description = "GLUE STS-B: sentence similarity 0-5, Pearson and Spearman (Cer et al. 2017)"
    text_columns = ("sentence1", "sentence2")
    regression = True
    label_range = (0.0, 5.0)
    headline = (
        Metric("pearson", "Pearson r", "r", "higher"),
        Metric("spearman", "Spearman rho", "rho", "higher"),
    )

    def statistics(self, rows: pd.DataFrame) -> dict[str, float]:
        labels, predictions = rows["label"], rows["prediction"]
        return {"pearson": pearson(labels, predictions), "spearman": spearman(labels, predictions)}
