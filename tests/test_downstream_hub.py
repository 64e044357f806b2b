"""The hub path of every downstream task, offline: small datasets in the hub datasets' exact
schemas, saved with ``save_to_disk`` and returned by a ``datasets.load_dataset`` that
answers only the hub id the task asks for, fed through the same loader the real hub id takes.

Schemas (checked on the dataset cards and loading scripts):

* ``LabHC/bias_in_bios`` (its README's ``dataset_info``): ``hard_text`` string,
  ``profession`` int64 (28 occupations, 0 accountant ... 27 yoga_teacher), ``gender`` int64
  (0 male, 1 female); splits ``train``, ``test``, ``dev``.
* ``nyu-mll/glue`` (formerly ``glue``; its ``glue.py`` ``_info``): the text columns as
  strings, ``label`` a ``ClassLabel`` (sst2 negative/positive, cola unacceptable/acceptable,
  mrpc not_equivalent/equivalent, rte entailment/not_entailment) or ``float32`` (stsb),
  ``idx`` int32; splits ``train``, ``validation``, ``test`` (test labels -1).
"""

from __future__ import annotations

import math
from pathlib import Path

import datasets
import pandas as pd
import pytest
from datasets import ClassLabel, Dataset, DatasetDict, Features, Value
from tiny_models import tiny_masked_lm

from cdsbias.downstream import get_task, load_all
from cdsbias.downstream.base import REGISTRY
from cdsbias.downstream.finetune import FinetuneConfig
from cdsbias.downstream.runner import ROWS_FILE, run_downstream
from cdsbias.errors import CdsbiasError

pytestmark = pytest.mark.usefixtures("one_thread")
load_all()

GLUE = "nyu-mll/glue"
#: A few steps that move a random 2-layer model (as in test_downstream.py).
QUICK = FinetuneConfig(learning_rate=5e-3, max_steps=4, batch_size=8, max_length=32)
#: GLUE config -> (text columns, ClassLabel names or None for float32).
GLUE_SCHEMAS: dict[str, tuple[tuple[str, ...], list[str] | None]] = {
    "sst2": (("sentence",), ["negative", "positive"]),
    "cola": (("sentence",), ["unacceptable", "acceptable"]),
    "mrpc": (("sentence1", "sentence2"), ["not_equivalent", "equivalent"]),
    "rte": (("sentence1", "sentence2"), ["entailment", "not_entailment"]),
    "stsb": (("sentence1", "sentence2"), None),
}
SENTENCES = [
    "A man is playing a guitar.",
    "A woman is slicing an onion.",
    "The movie was a delight from start to finish.",
    "A man is riding a horse.",
    "Nobody liked the ending.",
    "A woman is dancing in the rain.",
]


def _glue(config: str) -> DatasetDict:
    """Six rows a split in ``nyu-mll/glue``'s schema for ``config``."""
    texts, classes = GLUE_SCHEMAS[config]
    label = ClassLabel(names=classes) if classes else Value("float32")
    features = Features(
        {**{column: Value("string") for column in texts}, "label": label, "idx": Value("int32")}
    )
    splits = {}
    for split in ("train", "validation", "test"):
        n = len(SENTENCES)
        columns = {column: SENTENCES[i:] + SENTENCES[:i] for i, column in enumerate(texts)}
        if split == "test":  # GLUE hides its test labels
            labels = [-1 if classes else -1.0] * n
        else:
            labels = [i % 2 for i in range(n)] if classes else [0.8 * i for i in range(n)]
        splits[split] = Dataset.from_dict(
            {**columns, "label": labels, "idx": list(range(n))}, features=features
        )
    return DatasetDict(splits)


def _bias_in_bios() -> DatasetDict:
    """Rows in ``LabHC/bias_in_bios``' schema: two occupations, both genders, 3 splits."""
    features = Features(
        {"hard_text": Value("string"), "profession": Value("int64"), "gender": Value("int64")}
    )
    # The card's ids: 13 nurse, 24 software_engineer.
    texts = {13: "She cares for patients on the night shift .",
             24: "He writes code for a start-up in the city ."}  # fmt: skip
    rows = [(texts[p], p, g) for p in (13, 24) for g in (0, 1) for _ in range(4)]
    data = {"hard_text": [r[0] for r in rows], "profession": [r[1] for r in rows],
            "gender": [r[2] for r in rows]}  # fmt: skip
    return DatasetDict(
        {s: Dataset.from_dict(data, features=features) for s in ("train", "test", "dev")}
    )


#: task -> (hub path, config, DatasetDict builder).
HUB: dict[str, tuple[str, str | None, object]] = {
    "bias_in_bios": ("LabHC/bias_in_bios", None, _bias_in_bios),
    **{name: (GLUE, name, lambda name=name: _glue(name)) for name in GLUE_SCHEMAS},
    "bias_sts_b": (GLUE, "stsb", lambda: _glue("stsb")),
}


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """``datasets.load_dataset`` answering only the hub ids of :data:`HUB`, from disk."""
    saved: dict[tuple[str, str | None], Path] = {}
    for path, config, build in HUB.values():
        if (path, config) not in saved:
            folder = tmp_path / "hub" / path.replace("/", "--") / (config or "default")
            build().save_to_disk(str(folder))
            saved[(path, config)] = folder
    asked = []

    def load_dataset(path, name=None, *args, **kwargs):
        asked.append((path, name))
        if (path, name) not in saved:
            raise FileNotFoundError(f"Dataset '{path}' doesn't exist on the Hub")
        return datasets.load_from_disk(str(saved[(path, name)]))

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    return asked


def test_every_task_has_a_hub_schema_here():
    assert set(HUB) == set(REGISTRY), "add the new task's hub schema to HUB"


@pytest.mark.parametrize("name", sorted(HUB))
def test_the_hub_path_loads_the_hub_schema(name, hub):
    path, config, build = HUB[name]
    task = get_task(name)({"n_resamples": 0})
    assert task.hub_dataset == (path, config)
    splits = task.load()
    assert hub == [(path, config)]
    source = build()
    hub_test = source[task.hub_splits["test"]].to_pandas()
    hub_train = source[task.hub_splits["train"]].to_pandas()
    assert len(splits["train"]) == len(hub_train)
    assert task.facts["data"] == f"hub:{path}" + (f"/{config}" if config else "")
    label = splits["train"][task.label_column]
    if task.regression:
        assert pd.api.types.is_float_dtype(label)
        assert list(label) == pytest.approx(list(hub_train["label"]))
    else:
        assert pd.api.types.is_integer_dtype(label)
        assert list(label) == list(hub_train[task.label_column])
        assert task.num_labels == int(hub_train[task.label_column].max()) + 1
    if name == "bias_sts_b":  # the templates come from the validation split's man/woman rows
        assert task.facts["templates"] == 4
    else:
        assert list(splits["test"][task.label_column]) == pytest.approx(
            list(hub_test[task.label_column])
        )
        assert (splits["test"][task.label_column] != -1).all()  # never the hidden test split


def test_bias_in_bios_share_of_women_reads_the_hub_gender_ids(hub):
    task = get_task("bias_in_bios")({"n_resamples": 0})
    task.load()
    assert task.share_women == {13: 0.5, 24: 0.5}


@pytest.mark.parametrize("name", ["bias_in_bios", "stsb"])
def test_fine_tuning_from_the_hub_path(name, hub, tmp_path):
    """The whole run (classification and the float32 regression label) from the hub path."""
    bert = tiny_masked_lm("bert", tmp_path / "bert")
    options = {"n_resamples": 20, **({"min_group_examples": 2} if name == "bias_in_bios" else {})}
    summary = run_downstream([str(bert)], name, tmp_path / "out", seeds=(0,), options=options,
                             config=QUICK)  # fmt: skip
    rows = pd.read_csv(tmp_path / "out" / name / ROWS_FILE, sep="\t")
    assert len(rows) == summary["data"]["n_test"]
    (entry,) = summary["results"]
    key = get_task(name).headline[0].key
    assert math.isfinite(entry["metrics"][key]["value"])


def test_a_missing_hub_split_is_named(monkeypatch, tmp_path):
    broken = DatasetDict({"train": _glue("sst2")["train"]})  # no validation split
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: broken)
    with pytest.raises(CdsbiasError, match=r"nyu-mll/glue/sst2 has no 'validation' split"):
        get_task("sst2")().load()


def test_a_hub_column_renamed_lists_the_hub_columns(monkeypatch):
    renamed = _bias_in_bios().rename_column("hard_text", "text")
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: renamed)
    with pytest.raises(CdsbiasError) as error:
        get_task("bias_in_bios")().load()
    message = str(error.value)
    assert "LabHC/bias_in_bios [train] has no column 'hard_text'" in message
    assert "its columns: text, profession, gender" in message
