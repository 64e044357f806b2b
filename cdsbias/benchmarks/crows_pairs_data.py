"""CrowS-Pairs' data: reading the CSV of Nangia et al. (2020) and the values papers published."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from cdsbias.benchmarks.published import PublishedValue, per_category
from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset
from cdsbias.errors import CdsbiasError

#: CrowS-Pairs (Nangia et al. 2020): one upstream commit, one sha256 per file (computed from
#: the files in shared/data). ``cdsbias data fetch crows_pairs``.
DATASET = register_dataset(
    DatasetSpec(
        name="crows_pairs",
        folder="crows-pairs",
        licence="CC-BY-SA-4.0",
        repository="nyu-mll/crows-pairs",
        commit="8aaac11c485473159ec9328a65253a5be9a479dc",
        files=(
            DataFile(
                "crows_pairs_anonymized.csv",
                "data/crows_pairs_anonymized.csv",
                "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c",
            ),
        ),
    )
)

FILE = "crows_pairs_anonymized.csv"
REQUIRED = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")
DIRECTIONS = ("stereo", "antistereo")
#: The bias types of the CSV (pairs: race-color 516, gender 262, socioeconomic 172,
#: nationality 159, religion 105, age 87, sexual-orientation 84, physical-appearance 63,
#: disability 60).
BIAS_TYPES = (
    "race-color", "gender", "socioeconomic", "nationality", "religion", "age",
    "sexual-orientation", "physical-appearance", "disability",
)  # fmt: skip
#: Values published for bert-base-uncased (Meade et al. 2022; the bias-bench leaderboard's
#: BERT CrowS-Pairs gender score), on the gender pairs with bias-bench's scoring.
_MEADE = "Meade et al. 2022 (ACL); bias-bench leaderboard, BERT gender"
_BIAS_BENCH = "bias-bench scoring (mean log-probability of the modified tokens), gender pairs"
#: Race and religion: the bias-bench leaderboard's BERT CrowS-Pairs columns
#: (``_includes/leaderboard.html`` of McGill-NLP/bias-bench, branch gh-pages at 2b4d09f,
#: row "BERT": gender 57.25, race 62.33, religion 62.86); 62.86 is 66 of the 105 religion pairs.
_LEADERBOARD = "bias-bench leaderboard (Meade et al. 2022), BERT"
_PER_TYPE = "bias-bench scoring (mean log-probability of the modified tokens)"
#: Nangia et al. (2020), Table 2, column BERT (bert-base-uncased, their metric.py, the
#: ``nangia`` scoring): all pairs and each bias type, as printed (one decimal). Checked against
#: a third-party rerun of metric.py on bert-base-uncased whose per-pair outcomes give the same
#: values to one decimal (gokejian/mllu---social-bias-in-LMs-pretrained-on-scientific-corpora,
#: ``crows_pairs/bert_crows_score.csv``: all 60.48, race-color 58.14, socioeconomic 59.88,
#: gender 58.02, disability 61.67, nationality 62.89, sexual-orientation 67.86,
#: physical-appearance 63.49, religion 71.43, age 55.17).
NANGIA_BERT = {
    "race-color": 58.1, "socioeconomic": 59.9, "gender": 58.0, "disability": 61.7,
    "nationality": 62.9, "sexual-orientation": 67.9, "physical-appearance": 63.5,
    "religion": 71.4, "age": 55.2,
}  # fmt: skip
_NANGIA = "Nangia et al. 2020 (EMNLP), Table 2, BERT"
_NANGIA_PROTOCOL = "metric.py (pseudo-log-likelihood of the unmodified tokens)"
PUBLISHED = (
    PublishedValue("bert-base-uncased", "metric_score_gender", 57.25, _MEADE, _BIAS_BENCH,
                   scope={"bias_type": None}, options={"scoring": "bias_bench"}),
    PublishedValue("bert-base-uncased", "metric_score", 57.25, _MEADE, _BIAS_BENCH,
                   scope={"bias_type": "gender"}, options={"scoring": "bias_bench"}),
    *(
        entry
        for bias, value in (("race-color", 62.33), ("religion", 62.86))
        for entry in (
            PublishedValue("bert-base-uncased", f"metric_score_{bias}", value,
                           f"{_LEADERBOARD}, {bias}", f"{_PER_TYPE}, {bias} pairs",
                           scope={"bias_type": None}, options={"scoring": "bias_bench"}),
            PublishedValue("bert-base-uncased", "metric_score", value,
                           f"{_LEADERBOARD}, {bias}", f"{_PER_TYPE}, {bias} pairs",
                           scope={"bias_type": bias}, options={"scoring": "bias_bench"}),
        )
    ),
    PublishedValue("bert-base-uncased", "metric_score", 60.5, f"{_NANGIA}, all pairs",
                   f"{_NANGIA_PROTOCOL}, all 1,508 pairs", scope={"bias_type": None},
                   options={"scoring": "nangia"}, decimals=1),
    *(
        entry
        for bias, value in NANGIA_BERT.items()
        for entry in (
            PublishedValue("bert-base-uncased", f"metric_score_{bias}", value,
                           f"{_NANGIA}, {bias}", f"{_NANGIA_PROTOCOL}, {bias} pairs",
                           scope={"bias_type": None}, options={"scoring": "nangia"},
                           decimals=1),
            PublishedValue("bert-base-uncased", "metric_score", value, f"{_NANGIA}, {bias}",
                           f"{_NANGIA_PROTOCOL}, {bias} pairs", scope={"bias_type": bias},
                           options={"scoring": "nangia"}, decimals=1),
        )
    ),
)  # fmt: skip

#: Meade et al. (2022)'s debiased BERT, each method fitted on the bias type it is scored on
#: ("aggregated results across three debiased models (one for each bias domain)"), with
#: bias-bench's word lists and scoring. CDA, Dropout and Self-Debias: the bias-bench
#: leaderboard (gh-pages at 2b4d09f, ``_includes/leaderboard.html``); INLP and SentenceDebias,
#: which the leaderboard lacks, as Gonçalves & Strubell (2023, EMNLP), Table 1, reprint them
#: from Meade et al. (their values for the other three equal the leaderboard's).
DEBIASED_BERT = {
    "CDA": {"gender": 56.11, "race-color": 56.70, "religion": 60.00},
    "Dropout": {"gender": 55.34, "race-color": 59.03, "religion": 55.24},
    "Self-Debias": {"gender": 52.29, "race-color": 56.70, "religion": 56.19},
    "INLP": {"gender": 51.15, "race-color": 67.96, "religion": 60.95},
    "SentenceDebias": {"gender": 52.29, "race-color": 62.72, "religion": 63.81},
}
_REPRINT = "Meade et al. 2022, as reprinted by Gonçalves & Strubell 2023 (EMNLP), Table 1"
#: The axis each bias type's debiased model was fitted on.
FITTED_AXIS = {"gender": "gender", "race-color": "race", "religion": "religion"}
PUBLISHED += tuple(
    entry
    for method, values in DEBIASED_BERT.items()
    for bias, value in values.items()
    for entry in per_category(
        "metric_score", bias, value,
        f"{_REPRINT if method in ('INLP', 'SentenceDebias') else _LEADERBOARD}, {bias}, "
        f"BERT + {method}",
        f"{_PER_TYPE}, {bias} pairs", options={"scoring": "bias_bench"}, method=method,
        fitted_axis=FITTED_AXIS[bias], word_lists="bias-bench",
    )
)  # fmt: skip


def read_crows_csv(path: str | Path) -> pd.DataFrame:
    """Parses the CrowS-Pairs CSV (``crows_pairs_anonymized.csv`` layout).

    Sentences are kept verbatim (the reference tokenizes them as they are); the label
    fields are stripped of stray spaces. CRLF and LF line ends may be mixed; quoted fields
    may hold commas, quotes and line breaks.

    Returns:
        One row per pair: ``line, sent_more, sent_less, stereo_antistereo, bias_type``.

    Raises:
        CdsbiasError: A missing column, or ``file:line`` of a row with an unknown direction,
            an empty sentence or bias type, or the wrong number of fields.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise CdsbiasError(f"Cannot read CrowS-Pairs data {path}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError as exc:
        raise CdsbiasError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise CdsbiasError(f"{path}: empty file.") from None
    header = [name.strip() for name in header]
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise CdsbiasError(
            f"{path}:1: missing column(s) {', '.join(missing)}; CrowS-Pairs needs "
            f"{', '.join(REQUIRED)}."
        )
    columns = {name: header.index(name) for name in REQUIRED}
    rows = []
    start = reader.line_num + 1
    try:
        for record in reader:
            line = start
            start = reader.line_num + 1
            if not any(field.strip() for field in record):
                continue
            if len(record) != len(header):
                raise CdsbiasError(
                    f"{path}:{line}: {len(record)} fields, the header has {len(header)} "
                    "(an unquoted comma or quote?)."
                )
            item = {name: record[index] for name, index in columns.items()}
            direction = item["stereo_antistereo"].strip()
            bias_type = item["bias_type"].strip()
            if direction not in DIRECTIONS:
                raise CdsbiasError(
                    f"{path}:{line}: stereo_antistereo is {direction!r}; expected stereo or "
                    "antistereo."
                )
            if not bias_type:
                raise CdsbiasError(f"{path}:{line}: empty bias_type.")
            for name in ("sent_more", "sent_less"):
                if not item[name].strip():
                    raise CdsbiasError(f"{path}:{line}: empty {name}.")
            rows.append(
                {
                    "line": line,
                    "sent_more": item["sent_more"],
                    "sent_less": item["sent_less"],
                    "stereo_antistereo": direction,
                    "bias_type": bias_type,
                }
            )
    except csv.Error as exc:
        raise CdsbiasError(f"{path}:{reader.line_num}: malformed CSV ({exc}).") from None
    if not rows:
        raise CdsbiasError(f"{path}: no CrowS-Pairs rows.")
    return pd.DataFrame(rows)
