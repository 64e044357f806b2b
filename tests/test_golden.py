"""Golden numbers: every registered benchmark on two tiny seeded models, and one 6-step
training run per method, compute exactly what ``tests/assets/golden/`` holds.

A failure lists every moved value as ``file: key: stored X, now Y``. After an *intended*
change of numbers, run ``python scripts/golden.py --write`` and commit the files with it.
Floats may move by ``K * EPS32 * scale`` (``golden_numbers.tolerance``: float32 rounding of
the log-probabilities they are made of, which differs from CPU to CPU), everything else
must be equal; see the "Golden numbers" section of docs/architecture.md.
"""

from __future__ import annotations

import json
import math

import golden_numbers as golden
import pytest

pytestmark = pytest.mark.usefixtures("one_thread")


def assert_no_difference(stored: dict[str, str], now: dict[str, str]) -> None:
    lines = golden.differences(stored, now)
    shown = lines[:40] + ([f"... and {len(lines) - 40} more"] if len(lines) > 40 else [])
    assert not lines, (
        "golden numbers moved (file: key: stored, now):\n  " + "\n  ".join(shown)
        + f"\nIf the change is intended, run `{golden.REGENERATE}` and commit the files."
    )  # fmt: skip


@pytest.fixture(scope="module")
def golden_models(tmp_path_factory):
    return golden.build_models(tmp_path_factory.mktemp("golden-models"))


@pytest.fixture(scope="module")
def training_base(tmp_path_factory):
    return golden.build_training_base(tmp_path_factory.mktemp("golden-base"))


def test_every_registered_benchmark_has_golden_numbers():
    missing = [
        f"{model}/{name}"
        for model in golden.MODELS
        for name in golden.benchmark_names()
        if not (golden.GOLDEN / "benchmarks" / model / f"{name}.json").exists()
    ]
    assert not missing, (
        f"no golden numbers for {', '.join(missing)}: give the benchmark a fixture in "
        f"FIXTURES of tests/golden_numbers.py and run `{golden.REGENERATE}`"
    )


@pytest.mark.parametrize("model", golden.MODELS)
@pytest.mark.parametrize("name", golden.benchmark_names())
def test_benchmark_numbers_are_golden(name, model, golden_models, becpro, tmp_path):
    now = golden.benchmark_files(model, golden_models[model], name, becpro, tmp_path)
    stem = f"benchmarks/{model}/{name}"
    assert_no_difference(golden.read_stored([f"{stem}.json", f"{stem}.rows.tsv"]), now)


# Six smoke runs: 36-38 s on the shared 2-core machine (under the ~40 s that would make them
# `slow`), and what the method refactor needs to see in every `make test`.
@pytest.mark.parametrize("method", list(golden.METHODS))
def test_training_numbers_are_golden(method, training_base, becpro, tmp_path):
    now = golden.training_files(method, training_base, becpro, tmp_path)
    assert_no_difference(golden.read_stored(now), now)


def test_a_moved_number_is_reported_with_key_stored_now_and_tolerance():
    tol = golden.K_BENCHMARK * golden.EPS32 * golden.LOGPROB_SCALE
    stored = {"a.json": json.dumps({"x": {"y": [1.0, 2]}, "name": "n", "gone": 1})}
    within = {"a.json": json.dumps({"x": {"y": [1.0 + tol / 2, 2]}, "name": "n", "gone": 1})}
    assert golden.differences(stored, within) == []
    moved = {"a.json": json.dumps({"x": {"y": [1.001, 3]}, "name": "m", "new": None})}
    assert golden.differences(stored, moved) == [
        f"a.json: x.y[0]: stored 1.0, now 1.001 (tolerance {tol:.2g})",
        f"a.json: x.y[1]: stored 2, now 3 (tolerance {tol:.2g})",
        "a.json: name: stored 'n', now 'm'",
        "a.json: gone: stored 1, now absent",
        "a.json: new: not stored, now None",
    ]
    tsv = "row\tp\tword\n3\t0.25\the\n"
    assert golden.differences({"r.tsv": tsv}, {"r.tsv": tsv.replace("he", "she")}) == [
        "r.tsv: row 3 word: stored 'he', now 'she'"
    ]
    assert golden.differences({"b.json": "{}"}, {"c.json": "{}"}) == [
        "b.json: stored, but no longer computed",
        f"c.json: not stored yet (run `{golden.REGENERATE}`)",
    ]


def test_a_sentence_score_brings_its_own_scale():
    # ABC's rows hold sentence scores (sums of log-probabilities) of ~300: the medians made
    # of them are exact to EPS32 * 300, not EPS32 * LOGPROB_SCALE.
    rows = "row\tscore\n0\t-320.5\n"
    stored = {"abc.json": json.dumps({"median": 0.5}), "abc.rows.tsv": rows}
    assert golden.scale("abc.json", stored) == 320.5
    assert golden.scale("abc.rows.tsv", stored) == 320.5
    assert golden.scale("kurita.json", {"kurita.json": "{}"}) == golden.LOGPROB_SCALE


def _perturbed(path: str, text: str, relative: float, scale: float) -> tuple[str, int]:
    """``text`` with every finite non-integer float moved by ``relative`` of its scale
    (``golden.rounding / EPS32``: the file's term scale, the value's own magnitude where
    larger, a log-ratio's conditioned one), and how many moved by more than the tolerance.

    A Wilcoxon rank sum (~2,000) moves by 2 at 1e-3 of itself: two rank swaps, which a
    correct CPU may make (``golden.RANK_SWAPS``); it moves, uncounted.
    """
    count = 0

    def move(value, key=""):
        nonlocal count
        if isinstance(value, dict):
            return {k: move(v, f"{key}.{k}") for k, v in value.items()}
        if isinstance(value, list):
            return [move(v, f"{key}[{i}]") for i, v in enumerate(value)]
        number = golden._number(value)
        if number is None or isinstance(value, int) or not math.isfinite(number):
            return value
        if isinstance(value, str) and "." not in value and "e" not in value:
            return value  # an integer cell (row, line number): exact anyway
        delta = relative * golden.rounding(scale, number, key) / golden.EPS32
        rank_sum = "wilcoxon" in key and key.endswith(".statistic")
        count += not (rank_sum and delta <= golden.tolerance(path, scale, number, key))
        return repr(number + delta) if isinstance(value, str) else number + delta

    if path.endswith(".tsv"):
        lines = [line.split("\t") for line in text.splitlines()]
        body = [lines[0], *([move(cell) for cell in line] for line in lines[1:])]
        return "".join("\t".join(line) + "\n" for line in body), count
    return json.dumps(move(json.loads(text))), count


@pytest.mark.parametrize("kind", ["benchmarks", "training"])
def test_a_change_of_1e_3_of_scale_fails_and_rounding_passes(kind):
    """The power of the tolerance on the stored numbers themselves: every float moved by
    1e-3 of its scale is reported; moved by half the tolerance, none is."""
    stored = golden.stored_files(kind)
    k = golden.K_TRAINING if kind == "training" else golden.K_BENCHMARK
    for path, text in stored.items():
        scale = golden.scale(path, stored)
        changed, count = _perturbed(path, text, 1e-3, scale)
        assert len(golden.differences(stored, {**stored, path: changed})) == count, path
        rounded, _ = _perturbed(path, text, k * golden.EPS32 / 2, scale)
        assert golden.differences(stored, {**stored, path: rounded}) == [], path
