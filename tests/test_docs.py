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


def run_worked_example(page: str, module_name: str):
    """Executes the first python block of ``docs/PAGE`` as module ``module_name`` (so that
    dataclasses resolve their annotations through it); yields, then removes the module."""
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module
    try:
        exec(compile(code, f"docs/{page}", "exec"), module.__dict__)
        yield
    finally:
        sys.modules.pop(module_name, None)


@pytest.fixture
def example_benchmark():
    for _ in run_worked_example("adding_a_benchmark.md", "cdsbias.benchmarks.pronoun_preference"):
        try:
            yield REGISTRY["pronoun_preference"]
        finally:
            REGISTRY.pop("pronoun_preference", None)


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


# ------------------------------------------------------------------ docs/adding_a_method.md
@pytest.fixture
def example_method():
    from cdsbias.methods import REGISTRY as METHODS

    for _ in run_worked_example("adding_a_method.md", "cdsbias.methods.equalizing_loss"):
        try:
            yield METHODS["equalizing_loss"]
        finally:
            METHODS.pop("equalizing_loss", None)


def test_worked_method_example_adds_its_term_by_hand(example_method, base):
    import torch

    from cdsbias.methods import plan_from_values
    from cdsbias.scoring import load_masked_lm

    model, tokenizer = load_masked_lm(base, progress=False)
    plan = plan_from_values({"equalizing_loss_weight": 0.5})
    assert plan.names == ["full", "equalizing_loss"] and plan.loss.role == "loss"
    plan.prepare(model, tokenizer)
    batch = tokenizer(["he is a nurse .", "my sister works ."], return_tensors="pt", padding=True)
    labels = torch.full_like(batch["input_ids"], -100)
    labels[0, 1], labels[1, 2] = batch["input_ids"][0, 1], batch["input_ids"][1, 2]
    with torch.no_grad():
        outputs = model(**batch, labels=labels)
        term = plan.loss.loss_terms(model, {**batch, "labels": labels}, outputs)["equalizing"]
    log_probs = torch.log_softmax(outputs.logits, -1)
    vocab = tokenizer.get_vocab()
    words = sys.modules["cdsbias.methods.equalizing_loss"].PAIRS
    pairs = [(vocab[m], vocab[f]) for m, f in words if m in vocab and f in vocab]
    assert pairs
    gaps = [abs(log_probs[r, c, m] - log_probs[r, c, f]) for r, c in ((0, 1), (1, 2))
            for m, f in pairs]  # fmt: skip
    assert term.item() == pytest.approx(0.5 * float(sum(gaps)) / len(gaps), rel=1e-6)
    with pytest.raises(CdsbiasError, match="equalizing_loss_weight must be 0 or more"):
        plan_from_values({"equalizing_loss_weight": -1.0})


@pytest.mark.usefixtures("one_thread")
def test_worked_method_example_trains_logs_and_cites(example_method, base, becpro, tmp_path):
    import json

    from huggingface_hub import ModelCard
    from tests_helpers import fine_tune

    from cdsbias.cli import main as cli

    plain = fine_tune(tmp_path / "plain", becpro, base, "max_steps=2")
    zero = fine_tune(tmp_path / "zero", becpro, base, "max_steps=2", "equalizing_loss_weight=0")
    # lambda = 0 adds nothing: every evaluated number equals plain full fine-tuning's.
    assert (zero / "bias_metrics.jsonl").read_text() == (plain / "bias_metrics.jsonl").read_text()
    run = fine_tune(tmp_path / "run", becpro, base, "max_steps=2", "logging_steps=1",
                    "equalizing_loss_weight=1.0")  # fmt: skip
    history = json.loads((run / "trainer_state.json").read_text())["log_history"]
    terms = [entry["debias/equalizing"] for entry in history if "debias/equalizing" in entry]
    assert len(terms) == 2 and all(t > 0 for t in terms)
    info = json.loads((run / "run_info.json").read_text())["method"]
    assert info["methods"] == ["full", "equalizing_loss"]
    assert info["label"] == "full fine-tuning + equalizing loss (lambda 1)"
    out = tmp_path / "published"
    assert cli(["publish", str(run / "checkpoint-2"), "--repo-id", "org/eq", "--dry-run",
                "--out", str(out)]) == 0  # fmt: skip
    card = ModelCard.load(out / "README.md")
    assert "Qian, Y., Muaz, U." in card.text and "equalizing-loss" in card.data.tags
    assert "- **gender-equalizing loss**: a gender-equalizing loss term" in card.text
