"""Golden numbers: every registered benchmark on two tiny seeded models, and one 6-step
training run per method, compute exactly what ``tests/assets/golden/`` holds.

A failure lists every moved value as ``file: key: stored X, now Y``. After an *intended*
change of numbers, run ``python scripts/golden.py --write`` and commit the files with it.
Floats are compared to a relative 1e-6 (``golden_numbers.REL_TOL``), everything else
exactly; on one CPU thread every value is in fact bit-identical from run to run.
"""

from __future__ import annotations

import json

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
def test_training_numbers_are_golden(method, base, becpro, tmp_path):
    now = golden.training_files(method, base, becpro, tmp_path)
    assert_no_difference(golden.read_stored(now), now)


def test_a_moved_number_is_reported_with_key_stored_and_now():
    stored = {"a.json": json.dumps({"x": {"y": [1.0, 2]}, "name": "n", "gone": 1})}
    within = {"a.json": json.dumps({"x": {"y": [1.0 + 5e-7, 2]}, "name": "n", "gone": 1})}
    assert golden.differences(stored, within) == []
    moved = {"a.json": json.dumps({"x": {"y": [1.00001, 3]}, "name": "m", "new": None})}
    assert golden.differences(stored, moved) == [
        "a.json: x.y[0]: stored 1.0, now 1.00001",
        "a.json: x.y[1]: stored 2, now 3",
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
