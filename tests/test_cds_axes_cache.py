"""n-ary CDS results are not read back from the datasets cache after the rules change: the
rules' digest is part of the mapper, hence of its cache fingerprint."""

from __future__ import annotations

import os
import subprocess
import sys

from datasets.fingerprint import Hasher

from cdsbias.cds import axis_corpus
from cdsbias.cds.axis_corpus import AxisCounterfactualMapper, rules_digest


def test_the_fingerprint_follows_the_rules(monkeypatch):
    before = AxisCounterfactualMapper("text", axis="race", seed=1)
    assert before.rules == rules_digest() and len(before.rules) == 16
    assert Hasher.hash(before) == Hasher.hash(AxisCounterfactualMapper("text", axis="race", seed=1))
    monkeypatch.setattr(axis_corpus, "rules_digest", lambda: "0" * 16)
    after = AxisCounterfactualMapper("text", axis="race", seed=1)
    assert Hasher.hash(after) != Hasher.hash(before)


MAP_ONCE = """
import sys, datasets
from cdsbias.cds import axis_corpus
if sys.argv[2] == "changed":
    axis_corpus.rules_digest = lambda: "0" * 16  # as if the rule files had changed
corpus = datasets.load_dataset("json", data_files=sys.argv[1], split="train")
mapper = axis_corpus.AxisCounterfactualMapper("text", axis="race", seed=1, counterfactuals="all")
print(corpus.map(mapper, batched=True).cache_files[0]["filename"])
"""


def test_a_cached_corpus_is_mapped_again_after_a_rule_change(tmp_path):
    """A fresh process (as each ``cdsbias cds`` run) reads its earlier result back from the
    cache, unless the rules changed. (Within one process the axis's lazily built lookups
    already change the fingerprint, so separate processes are what shows the cache.)"""
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "He was white."}\n', encoding="utf-8")
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"), "OMP_NUM_THREADS": "1"}

    def cache_file(rules: str) -> str:
        run = subprocess.run(
            [sys.executable, "-c", MAP_ONCE, str(source), rules],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return run.stdout.strip().splitlines()[-1]

    first = cache_file("shipped")
    assert cache_file("shipped") == first
    assert cache_file("changed") != first
