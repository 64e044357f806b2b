"""CDS results are not read back from the datasets cache after the rules change: the rules'
digest (:mod:`cdsbias.cds.rules_digest`) is part of every mapper, hence of its cache
fingerprint: the gender mapper and the n-ary axis mapper alike."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO
from datasets.fingerprint import Hasher

from cdsbias.cds import axis_corpus, corpus
from cdsbias.cds.axis_corpus import AxisCounterfactualMapper
from cdsbias.cds.corpus import CounterfactualMapper
from cdsbias.cds.rules_digest import SOURCES, rules_digest

MAPPERS = {
    "gender": (corpus, lambda: CounterfactualMapper("text", probability=1.0, seed=1)),
    "race": (axis_corpus, lambda: AxisCounterfactualMapper("text", axis="race", seed=1)),
}


@pytest.mark.parametrize("axis", sorted(MAPPERS))
def test_the_fingerprint_follows_the_rules(monkeypatch, axis):
    module, build = MAPPERS[axis]
    before = build()
    assert before.rules == rules_digest() and len(before.rules) == 16
    assert Hasher.hash(before) == Hasher.hash(build())
    monkeypatch.setattr(module, "rules_digest", lambda: "0" * 16)
    assert Hasher.hash(build()) != Hasher.hash(before)


def test_the_digest_reads_the_rules_and_word_lists():
    package = REPO / "cdsbias"
    read = {
        str(path.relative_to(package))
        for folder, pattern in SOURCES
        for path in (package / folder).rglob(pattern)
        if path.is_file() and "__pycache__" not in path.parts
    }
    for needed in ("cds/guard.py", "cds/languages/en.py", "cds/axis_substitution.py",
                   "resources/wordlists/gendered_word_pairs.tsv", "resources/axes/race.tsv",
                   "resources/wordlists/de/person_nouns.tsv.gz", "axes/gender.py"):  # fmt: skip
        assert needed in read


MAP_ONCE = """
import sys, datasets
from cdsbias.cds import axis_corpus, corpus
module = corpus if sys.argv[3] == "gender" else axis_corpus
if sys.argv[2] == "changed":
    module.rules_digest = lambda: "0" * 16  # as if the rule files had changed
data = datasets.load_dataset("json", data_files=sys.argv[1], split="train")
if sys.argv[3] == "gender":
    mapper = corpus.CounterfactualMapper("text", probability=1.0, seed=1)
else:
    mapper = axis_corpus.AxisCounterfactualMapper("text", axis="race", counterfactuals="all")
print(data.map(mapper, batched=True).cache_files[0]["filename"])
"""


@pytest.mark.parametrize("axis", sorted(MAPPERS))
def test_a_cached_corpus_is_mapped_again_after_a_rule_change(tmp_path, axis):
    """A fresh process (as each ``cdsbias cds`` or ``train.py`` run) reads its earlier
    result back from the cache, unless the rules changed. (Within one process the race
    axis's lazily built lookups already change the fingerprint, so separate processes are
    what shows the cache.)"""
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "He was white."}\n', encoding="utf-8")
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"), "OMP_NUM_THREADS": "1"}

    def cache_file(rules: str) -> str:
        run = subprocess.run(
            [sys.executable, "-c", MAP_ONCE, str(source), rules, axis],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return run.stdout.strip().splitlines()[-1]

    first = cache_file("shipped")
    assert cache_file("shipped") == first
    assert cache_file("changed") != first
