"""SEAT's data: the test files of May et al. (2019), their download spec, and reading them.

Each test is one JSON file ``<name>.jsonl`` (one object, despite the extension) with four
sets, ``targ1``, ``targ2`` (targets X, Y) and ``attr1``, ``attr2`` (attributes A, B), each
``{"category": ..., "examples": [sentences]}``. The files are sent-bias's ``tests/`` folder
at a pinned commit (CC BY-NC 4.0: fetched, never shipped), and the four religion tests
bias-bench adds (``sent-religion1``, ``1b``, ``2``, ``2b``: Christianity vs Islam or Judaism
terms against good/bad and pleasant/unpleasant), from McGill-NLP/bias-bench's ``data/seat/``
at a pinned commit (dataset ``seat_religion``, fetched into the same folder, never shipped).
The default tests of each bias axis are the axis's (:attr:`cdsbias.axes.BiasAxis.seat_tests`).
"""

from __future__ import annotations

import json
from pathlib import Path

from cdsbias.axes.gender import SEAT_TESTS as GENDER_TESTS
from cdsbias.axes.race import SEAT_TESTS as RACE_TESTS
from cdsbias.axes.religion import SEAT_TESTS as RELIGION_TESTS
from cdsbias.benchmarks.published import PublishedValue
from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset
from cdsbias.errors import CdsbiasError

#: The four sets of a test, in the order of the reference: targets X, Y; attributes A, B.
SETS = ("targ1", "targ2", "attr1", "attr2")

#: ``(test name, sha256)`` of every file of sent-bias ``tests/`` at the pinned commit.
_FILES = (
    (
        "angry_black_woman_stereotype",
        "06ac61a1054ff82596a4b713e1acc5d800e5b70e84b1dd24d9e32231854e8828",
    ),
    (
        "angry_black_woman_stereotype_b",
        "69844f32f32f1f33264446d5a8ff75b11e896719c6627e8721a2e3153c493b9d",
    ),
    (
        "heilman_double_bind_competent_1+3-",
        "21924ce01aaee12162d8833e4f1dc5c3c332ebbbc720e7736ef554851cf1e4d2",
    ),
    (
        "heilman_double_bind_competent_1-",
        "08d78185021e1dc899ca349759906d42a74d245de62a624ca7cf24853c85f936",
    ),
    (
        "heilman_double_bind_competent_1",
        "83260f3683107446d18f20d1653a63cf53e30660fb800b4419719c0548d81c5e",
    ),
    (
        "heilman_double_bind_competent_one_sentence",
        "472b008cdeaebc97287e25dda29cee80fbcfdf976bbdcc267a9789c39580b2bf",
    ),
    (
        "heilman_double_bind_competent_one_word",
        "2926a59745fa07c4069cdfe5eec3153b3a1eb43e1edeefe41667765f2b87a32f",
    ),
    (
        "heilman_double_bind_likable_1+3-",
        "7bae0867001c671175d1582e1607fa16fbf3268a4862d68ee05b8b0a046c5663",
    ),
    (
        "heilman_double_bind_likable_1-",
        "aa3c3b26c8059b7f6318b37f1d1133161dc0b28531f9f2e797acbf46c1c219ca",
    ),
    (
        "heilman_double_bind_likable_1",
        "ebfc4ce95c6687a96d8cecdd453c51b252803b1cd94c98efccb4860a5612f139",
    ),
    (
        "heilman_double_bind_likable_one_sentence",
        "76a61eade11c46470d40746a45fff48235339aebe6302a00e7edeb95c6498a06",
    ),
    (
        "heilman_double_bind_likable_one_word",
        "47566cb0cf9a96a102f96a8b4f5fa1a7ff5108fc9d51b7564adcae30f4031ae4",
    ),
    (
        "sent-angry_black_woman_stereotype",
        "d421fb37fbac73184d60a73b95b5585cfc9bf0683b8100a57cd87d6d1c149588",
    ),
    (
        "sent-angry_black_woman_stereotype_b",
        "95b0bf8cde740bcd5241af89a217687dcf0a13bb48db8a628a49872df9bb1505",
    ),
    (
        "sent-heilman_double_bind_competent_one_word",
        "cc99565db26eaea3b09fe73b93109a6c3c11decb7b320f73942abdd7f60fa5d4",
    ),
    (
        "sent-heilman_double_bind_likable_one_word",
        "f3bb2f8e41caec232262ca3eec86ad4d773e1cb6fa5d0e33c7a863dccd40db7a",
    ),
    ("sent-weat1", "ff493f29fa0e0984b67e1502b0c04688473e189fd6d107c91054507ed73ff77a"),
    ("sent-weat10", "04dd864639909052e2ee1f386cfc0a99b5d5311c7c3ab0411396a6f5ddf0aeae"),
    ("sent-weat2", "58378442b8894e6987250a4ca52fc36495429c85695e9dcf952e9c4c31626609"),
    ("sent-weat3", "1e1b9f89f518ad5bba47cbe5bd1d08d679b296b3eb640ee0b060f080c5d7ffef"),
    ("sent-weat3b", "8db3f84b109031a8b86392fbd4544ca1b29f361d98b30b1e83a82b1ca60ee351"),
    ("sent-weat4", "5eb5a2bc5b36d8c0567b1992aea7adb015f3e170e4d24a220c2dca763f59a418"),
    ("sent-weat5", "2478d808135759371ee43754fa8efd89a928e434ad2981df61726b7328c5fb47"),
    ("sent-weat5b", "c0af61519bee074d0c3218bf8e5537b10fae5d795230422cd7bff92f90cafc26"),
    ("sent-weat6", "bcf1a6864e3da0e8982d70451721877f23e2efaf6aea33628df843d826b68ae2"),
    ("sent-weat6b", "8d1dd09833d1854784503c2eb9986d1951d684fb3289a18da85e72fa1e59e4ff"),
    ("sent-weat7", "86c151b640bc9ebf6f60cd94920ab1f5bff68ea1a993f322f729cf3620173e0f"),
    ("sent-weat7b", "16b7c23eb529421b411b508b2928b0d62e52cbb80cf40f8e9acbdfb52cd75350"),
    ("sent-weat8", "352fea8d5440800a219dd6141a6f5e414a708770bc2717bfc581bc249e108ded"),
    ("sent-weat8b", "c410535cac813f806d20a7f76f4bea62ee44f98d8828f8f0ac6a4b7694c414bc"),
    ("sent-weat9", "dd1b60d64dedde7ce532915a6a39cd8ec7d036e90896a6a854bfcd6315866c6c"),
    ("weat1", "c12c192a4b8011590cfe7de237cb2e0dbcd0e7328e3b7baf63869ccfd61bc0ea"),
    ("weat10", "4878efc95d1bbb9c482fc90a5c2c379f9b5a990c7ea9e61f13611fff355a23bc"),
    ("weat2", "d907a10b5a84a72f4e60bf069562565aa88b0e0c84e26adb38a75536718e25b9"),
    ("weat3", "99e5fdbfe3749608afb803eb55d1fb291f81399862ba4cc2b21461ae82215bf7"),
    ("weat3b", "1642a16492fb2e65ff84c858f81ee50737825b96cc0ce880f3409b4dc2e8dd5a"),
    ("weat4", "c0d0c606d20a0ccb8759dcbddaea1b692a860e9dbeea2ccdcade3e3c25868dbb"),
    ("weat5", "7e1ac48a1c8b549200ce5e4c9ed7fd6f0c2c766485d04e73adee05358a9b3224"),
    ("weat5b", "95d5e31bebbe612274fcde0bb311c6fe012f26623522ac4a2b2c9a78ddbb9d2a"),
    ("weat6", "21681d3f4d7fdf97cf4cd2c0f9160940cfbd797ec62c7621b5600dc9e6e5b248"),
    ("weat6b", "b6c85b5228a3786827b528af3d633fbbddc4fbf05d93e6ceb6f76a4881386c1d"),
    ("weat7", "c7e68ec95e30f42df3faa9e1ba933596c9e49651e0017bb90c19d0f58312f2b0"),
    ("weat7b", "714c42ccf6ec71113fcb2064daa7b4dfc80b0cd4bb191c8d0196053681a9792b"),
    ("weat8", "86e650b44e8fd539a9082564f5ede5dae2ed67d120938b9c92a7495f143801e9"),
    ("weat8b", "db822460372ae472b8cf8fd41a44ca13e4f166bb9ee05ea13a983fe0301016ef"),
    ("weat9", "e4c9ab7cd719dcc05a2bd86c390de31ae2778db3c362b360206c0491751fe9f7"),
)

DATASET = register_dataset(
    DatasetSpec(
        name="seat",
        folder="seat",
        licence="CC-BY-NC-4.0 (non-commercial use only)",
        repository="W4ngatang/sent-bias",
        commit="e3559fb669ca4832743b42fee715994c15c7f1af",
        files=tuple(DataFile(f"{name}.jsonl", f"tests/{name}.jsonl", sha) for name, sha in _FILES),
    )
)

#: ``(test name, sha256)`` of bias-bench's religion tests (``data/seat/`` at the pinned commit).
_RELIGION_FILES = (
    ("sent-religion1", "39eceaa76103c32772bf6d13e78686a10272754e821c3197d07cf2bd4cee34e2"),
    ("sent-religion1b", "baddaead03ed69f50bb29ac3130108ca753fb6933ed0de435d3146403b51fbf5"),
    ("sent-religion2", "692ca32dc36305d34792aea17b9b1e3d520fe0f3c686f59d34159c9cfb3cdb2a"),
    ("sent-religion2b", "b7012c637402e85f00da240daf040b92888df4923c31a06e64998abf3a043521"),
)

RELIGION_DATASET = register_dataset(
    DatasetSpec(
        name="seat_religion",
        folder="seat",
        licence="none stated in McGill-NLP/bias-bench (fetched, never shipped)",
        repository="McGill-NLP/bias-bench",
        commit="291426aab926f78ecfc7bd040b531429ee8123e0",
        files=tuple(
            DataFile(f"{name}.jsonl", f"data/seat/{name}.jsonl", sha)
            for name, sha in _RELIGION_FILES
        ),
    )
)

#: Published values (see :mod:`cdsbias.benchmarks.published`): Meade et al. 2022 report
#: bert-base-uncased's average |d| over the six gender tests. Their table could not be read
#: offline; Li et al. (2023, ACL), Table 1, scoring bert-base-uncased with bias-bench's code,
#: print 0.621 (0.932, 0.090, -0.124, 0.937, 0.783, 0.858 for sent-weat6 ... 8b), within
#: the last printed digit of Meade et al.'s 0.620. (The bias-bench
#: leaderboard's SEAT column, 0.590, averages the gender, race and religion tests: another
#: scope, whose test list the leaderboard does not state, so not declared.)
PUBLISHED = (
    PublishedValue(
        "bert-base-uncased",
        "avg_abs_effect_size",
        0.620,
        "Meade et al. 2022 (ACL), BERT gender SEAT; 0.621 in Li et al. 2023 (ACL), Table 1",
        "bias-bench: the six gender tests, last layer mean over all tokens, L2-normalised",
        scope={"tests": list(GENDER_TESTS)},
        options={"pooling": "mean", "layer": -1},
        decimals=3,
    ),
)
#: Race (7 tests) and religion (4 tests), and Meade et al.'s debiased BERT on every axis (each
#: method fitted on the axis it is scored on, bias-bench's word lists; Self-Debias changes no
#: representation, so SEAT cannot score it): average |d| as Gonçalves & Strubell (2023,
#: EMNLP), Tables 7-9, reprint them from Meade et al. (each average equals the mean of the
#: reprinted per-test |d| to the printed digit; the undebiased gender 0.620 is the value above).
_REPRINT = "Meade et al. 2022, as reprinted by Gonçalves & Strubell 2023 (EMNLP)"
_TABLES = {"gender": 7, "race": 8, "religion": 9}
_AXIS_TESTS = {"gender": GENDER_TESTS, "race": RACE_TESTS, "religion": RELIGION_TESTS}
BERT = {"race": 0.620, "religion": 0.492}
DEBIASED_BERT = {
    "CDA": {"gender": 0.722, "race": 0.569, "religion": 0.339},
    "Dropout": {"gender": 0.765, "race": 0.554, "religion": 0.377},
    "INLP": {"gender": 0.204, "race": 0.639, "religion": 0.460},
    "SentenceDebias": {"gender": 0.434, "race": 0.612, "religion": 0.439},
}


def _seat_value(axis: str, value: float, method: str = "") -> PublishedValue:
    model = f"BERT + {method}" if method else "BERT"
    return PublishedValue(
        "bert-base-uncased",
        "avg_abs_effect_size",
        value,
        f"{_REPRINT}, Table {_TABLES[axis]}, {model}",
        f"bias-bench: the {len(_AXIS_TESTS[axis])} {axis} tests, last layer mean over all "
        "tokens, L2-normalised",
        scope={"tests": list(_AXIS_TESTS[axis])},
        options={"pooling": "mean", "layer": -1},
        decimals=3,
        method=method,
        fitted_axis=axis if method else "",
        word_lists="bias-bench" if method else "",
    )


PUBLISHED += tuple(_seat_value(axis, value) for axis, value in BERT.items())
PUBLISHED += tuple(
    _seat_value(axis, value, method)
    for method, values in DEBIASED_BERT.items()
    for axis, value in values.items()
)

#: Every test of the pinned folders, by name, and the fetched dataset that holds it.
DATASET_OF = {
    **{name: DATASET.name for name, _ in _FILES},
    **{name: RELIGION_DATASET.name for name, _ in _RELIGION_FILES},
}
TEST_NAMES = tuple(DATASET_OF)


def folder_tests(folder: Path) -> dict[str, Path]:
    """``{test name: file}`` of the ``*.jsonl`` files of a folder (a user's own tests)."""
    return {path.stem: path for path in sorted(folder.glob("*.jsonl")) if path.is_file()}


def read_test(path: Path) -> dict[str, tuple[str, list[str]]]:
    """One SEAT test file: ``{set: (category, sentences)}`` for targ1, targ2, attr1, attr2.

    A sentence repeated inside a set counts once, as in the reference (it keys encodings
    by sentence).

    Raises:
        CdsbiasError: Unreadable or invalid JSON, a missing set, a set without sentences,
            or target sets of different sizes (the permutation test splits X u Y in halves).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CdsbiasError(f"Cannot read SEAT test {path}: {exc.strerror or exc}.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CdsbiasError(f"SEAT test {path} is not a JSON object: {exc}.") from None
    if not isinstance(data, dict):
        raise CdsbiasError(f"SEAT test {path} is not a JSON object of targ1, targ2, attr1, attr2.")
    sets = {}
    for name in SETS:
        entry = data.get(name)
        examples = entry.get("examples") if isinstance(entry, dict) else None
        if not isinstance(examples, list):
            raise CdsbiasError(
                f"SEAT test {path} has no {name} set; a test needs targ1, targ2, attr1 and "
                'attr2, each {"category": ..., "examples": [sentences]}.'
            )
        if not all(isinstance(s, str) and s.strip() for s in examples):
            raise CdsbiasError(f"SEAT test {path}: set {name} holds an empty or non-text example.")
        sentences = list(dict.fromkeys(examples))
        if not sentences:
            raise CdsbiasError(f"SEAT test {path}: set {name} has no sentences.")
        sets[name] = (str(entry.get("category", name)), sentences)
    if len(sets["targ1"][1]) != len(sets["targ2"][1]):
        raise CdsbiasError(
            f"SEAT test {path}: targ1 has {len(sets['targ1'][1])} sentences and targ2 "
            f"{len(sets['targ2'][1])}; the permutation test needs target sets of equal size."
        )
    return sets
