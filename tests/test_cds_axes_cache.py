"""n-ary CDS results are not read back from the datasets cache after the rules change: the
rules' digest is part of the mapper, hence of its cache fingerprint."""

from __future__ import annotations

import datasets
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


def test_a_cached_corpus_is_mapped_again_after_a_rule_change(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "He was white."}\n', encoding="utf-8")
    corpus = datasets.load_dataset("json", data_files=str(source), split="train")
    mapper = AxisCounterfactualMapper("text", axis="race", seed=1, counterfactuals="all")
    first = corpus.map(mapper, batched=True)
    assert first.cache_files and first["text"][1:] == ["He was Asian.", "He was black."]
    monkeypatch.setattr(axis_corpus, "rules_digest", lambda: "0" * 16)
    changed = AxisCounterfactualMapper("text", axis="race", seed=1, counterfactuals="all")
    again = corpus.map(changed, batched=True)
    assert again.cache_files[0]["filename"] != first.cache_files[0]["filename"]
