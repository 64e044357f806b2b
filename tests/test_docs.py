"""The worked example of docs/adding_a_benchmark.md runs as written and meets the contract."""

from __future__ import annotations

import re
import sys
import types

import pytest
from conftest import REPO

from cdsbias.benchmarks import REGISTRY, build_benchmark
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer


@pytest.fixture
def example_benchmark():
    text = (REPO / "docs" / "adding_a_benchmark.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    name = "cdsbias.benchmarks.pronoun_preference"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses resolve annotations through the module
    try:
        exec(compile(code, "docs/adding_a_benchmark.md", "exec"), module.__dict__)
        yield REGISTRY["pronoun_preference"]
    finally:
        REGISTRY.pop("pronoun_preference", None)
        sys.modules.pop(name, None)


def test_worked_example_runs_through_the_interface(example_benchmark, real_vocab_bert, tmp_path):
    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert), progress=False)
    bench = build_benchmark("pronoun_preference", {"n_resamples": 100})
    result = bench.evaluate(scorer)
    he = scorer.target_log_probs(["[MASK] works here."], ["He"])[0]
    she = scorer.target_log_probs(["[MASK] works here."], ["She"])[0]
    assert result.rows["preference"].iloc[2] == pytest.approx(he - she, abs=1e-6)
    assert result.metrics["mean_preference"] == pytest.approx(result.rows["preference"].mean())
    assert "pronoun preference (3 sentences)" in result.report
    with pytest.raises(CdsbiasError, match="'n_resamples' must be at least 1, got 0"):
        build_benchmark("pronoun_preference", {"n_resamples": 0})
