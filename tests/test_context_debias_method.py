"""Context-Debias as a registered ``loss`` method: recipe keys, the Trainer's sum, the
original states per weights method, and a run that logs both terms."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from test_context_debias import CORPUS, FEMALE, MALE, PROFESSIONS, load
from tests_helpers import fine_tune
from tiny_models import tiny_masked_lm
from transformers import TrainingArguments

from cdsbias.errors import CdsbiasError
from cdsbias.methods import plan_from_values
from cdsbias.methods.context_debias import corpus_sentences, word_file
from cdsbias.train.trainer import DebiasTrainer

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_masked_lm("bert", tmp_path_factory.mktemp("cdm") / "bert")


@pytest.fixture(scope="module")
def word_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("words")
    for name, words in (("male", MALE), ("female", FEMALE), ("jobs", PROFESSIONS)):
        (folder / f"{name}.txt").write_text("\n".join(words) + "\n")
    return folder


def plan_of(word_files, **keys):
    values = {
        "debias_loss": "context_debias", "context_debias_batch_size": 8,
        "context_debias_attribute_words": [str(word_files / "male.txt"),
                                           str(word_files / "female.txt")],
        "context_debias_stereotype_words": str(word_files / "jobs.txt"), **keys,
    }  # fmt: skip
    return plan_from_values(values, given=values)


def test_recipe_keys():
    with pytest.raises(CdsbiasError, match=r"Unknown debias_loss 'context_debas'\. Did you mean "
                       r"'context_debias'"):  # fmt: skip
        plan_from_values({"debias_loss": "context_debas"})
    given = {"context_debias_alpha": 0.5}
    with pytest.raises(CdsbiasError, match=r"context_debias_alpha applies only to debias_loss: "
                       r"context_debias"):  # fmt: skip
        plan_from_values(given, given=given)
    with pytest.raises(CdsbiasError, match="context_debias_layers must be one of all, first"):
        plan_from_values({"debias_loss": "context_debias", "context_debias_layers": "middle"})
    with pytest.raises(CdsbiasError, match="one file per class"):
        plan_from_values({"debias_loss": "context_debias",
                          "context_debias_attribute_words": ["m.txt"]})  # fmt: skip
    plan = plan_from_values({"debias_loss": "context_debias"})
    assert plan.names == ["full", "context_debias"]
    assert (
        plan.label() == "full fine-tuning + Context-Debias (alpha 0.2, beta 0.8, all layers, token)"
    )
    assert plan.mlm_weight() == 0.0 and plan_from_values({}).mlm_weight() == 1.0
    assert "Kaneko" in plan.citations()[0]


def test_word_files_and_sentences(tmp_path):
    assert word_file("pronouns_male.txt").read_text().splitlines()[1:] == [
        "he", "him", "his", "himself"
    ]  # fmt: skip
    mine = tmp_path / "pronouns_male.txt"
    mine.write_text("x\n")
    assert word_file(str(mine)) == mine  # a path that exists wins
    text = ["He is a nurse. She was a judge.\nMy mother works."]
    assert list(corpus_sentences(text)) == [
        "He is a nurse.",
        "She was a judge.",
        "My mother works.",
    ]


def batch_of(tokenizer):
    batch = tokenizer(["he is a nurse .", "my sister works ."], return_tensors="pt", padding=True)
    labels = torch.full_like(batch["input_ids"], -100)
    labels[0, 1], labels[1, 2] = batch["input_ids"][0, 1], batch["input_ids"][1, 2]
    return {**batch, "labels": labels}


def trainer_for(model, plan, tmp_path):
    args = TrainingArguments(output_dir=str(tmp_path), report_to=[], use_cpu=True)
    return DebiasTrainer(plan=plan, model=model, args=args)


def test_trainer_adds_the_weighted_mlm_loss_and_both_terms(bert, word_files, tmp_path):
    """compute_loss = mlm_weight · MLM + α · L_debias + β · L_preserve, each term as the
    core computes it on the same batches."""
    model, tokenizer = load(bert)
    plan = plan_of(word_files, context_debias_mlm_weight=0.5, context_debias_alpha=0.3)
    model = plan.prepare(model, tokenizer)
    notes = plan.prepare_data(CORPUS, tokenizer, model, max_length=64)
    assert notes[0].startswith(
        "Context-Debias sentences: stereotype 5, attribute 0: 4, attribute 1: 5"
    )
    assert "frozen copy of the original model" in notes[0] and "MB" in notes[0]
    trainer = trainer_for(model, plan, tmp_path)
    inputs = batch_of(tokenizer)
    core = copy.deepcopy(plan.loss.loss)  # the same batch queues and random state
    model.eval()  # no dropout, so both sides agree; compute_loss reads the top flag only
    model.training = True
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(inputs))
        mlm = model(**inputs).loss
        terms = core.loss_terms(model)
    assert float(loss) == pytest.approx(float(0.5 * mlm + terms["debias"] + terms["preserve"]),
                                         rel=1e-5)  # fmt: skip
    assert float(terms["debias"]) > 0
    assert set(trainer._term_sums) == {"debias", "preserve"}


def test_zero_weights_give_exactly_the_weighted_mlm_loss(bert, word_files, tmp_path):
    model, tokenizer = load(bert)
    plan = plan_of(word_files, context_debias_alpha=0.0, context_debias_beta=0.0,
                   context_debias_mlm_weight=1.0)  # fmt: skip
    model = plan.prepare(model, tokenizer)
    plan.prepare_data(CORPUS, tokenizer, model)
    inputs = batch_of(tokenizer)
    trainer = trainer_for(model, plan, tmp_path)
    model.eval()  # no dropout: the two forward passes agree exactly
    model.training = True  # compute_loss reads the top module's flag only
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(inputs))
        assert float(loss) == float(model(**inputs).loss)
    assert trainer._term_sums == {"debias": 0.0, "preserve": 0.0}


def test_lora_reads_the_original_states_with_the_adapter_off(bert, word_files):
    model, tokenizer = load(bert)
    base = copy.deepcopy(model).eval()
    plan = plan_of(word_files, peft_method="lora", lora_r=4)
    model = plan.prepare(model, tokenizer)
    notes = plan.prepare_data(CORPUS, tokenizer, model)
    assert notes[0].endswith("original states: the adapter switched off")
    assert plan.loss.loss.original_bytes == 0
    with torch.no_grad():  # a trained adapter: the states with it on differ
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.fill_(0.05)
    ids = torch.tensor([tokenizer("he is a nurse .")["input_ids"]])
    mask = torch.ones_like(ids)
    original = plan.loss.loss.original_states(model, ids, mask)
    with torch.no_grad():
        out = base.bert(ids, attention_mask=mask, output_hidden_states=True)
        expected = torch.stack(out.hidden_states, dim=2)
    assert torch.equal(original, expected)


def test_a_run_logs_both_terms(tmp_path, becpro, bert):
    from cdsbias.methods.context_debias import ContextDebias

    keys = [f"{k}={json.dumps(v)}" for k, v in ContextDebias.example.items()]
    run = fine_tune(tmp_path / "run", becpro, bert, *keys, "logging_steps=1")
    history = json.loads((run / "trainer_state.json").read_text())["log_history"]
    logged = [entry for entry in history if "debias/debias" in entry]
    assert len(logged) == 2 and all("debias/preserve" in entry for entry in logged)
    assert all(entry["debias/preserve"] >= 0 for entry in logged)
    recipe = (run / "recipe.yaml").read_text()
    assert "debias_loss: context_debias" in recipe


def test_a_resumed_full_weights_run_keeps_the_original_model(tmp_path, becpro, bert):
    """Resumed at step 2, the run's terms at steps 3 and 4 are the uninterrupted run's: the
    frozen copy and the attribute vectors come from model_name_or_path, not from the
    checkpoint (which made the first resumed preservation term exactly 0).

    Every step reads every example (pools of at most 8 stereotype and 16 attribute
    sentences, batches of 64) and the model has no dropout, so a step's terms depend only
    on the weights; the resumed run's shuffled order changes float sums only (1e-5).
    """
    import shutil

    from cdsbias.methods.context_debias import ContextDebias

    base = tmp_path / "base"
    shutil.copytree(bert, base)
    config = json.loads((base / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (base / "config.json").write_text(json.dumps(config))
    keys = [f"{k}={json.dumps(v)}" for k, v in ContextDebias.example.items()]
    keys += ["context_debias_batch_size=64", "context_debias_max_sentences=8",
             "max_steps=4", "save_steps=2", "logging_steps=1"]  # fmt: skip
    whole = fine_tune(tmp_path / "whole", becpro, base, *keys)
    resumed = tmp_path / "resumed"
    shutil.copytree(whole, resumed, ignore=shutil.ignore_patterns("checkpoint-4"))
    fine_tune(resumed, becpro, base, *keys, "resume_from_checkpoint=true")

    def terms(run):
        history = json.loads((run / "trainer_state.json").read_text())["log_history"]
        return {e["step"]: (e["debias/debias"], e["debias/preserve"])
                for e in history if "debias/preserve" in e}  # fmt: skip

    uninterrupted, after_resume = terms(whole), terms(resumed)
    assert set(uninterrupted) == {1, 2, 3, 4} and {3, 4} <= set(after_resume)
    assert uninterrupted[1][1] == 0.0  # step 1: the model is still the original
    assert after_resume[3][1] > 1e-3 * uninterrupted[3][1] > 0  # not the checkpoint's 0
    for step in (3, 4):
        assert after_resume[step] == pytest.approx(uninterrupted[step], rel=1e-5)
