"""Context-Debias (Kaneko & Bollegala 2021): example selection, the two terms, original states."""

from __future__ import annotations

import logging
import warnings

import pytest
import torch
from tiny_models import ARCHITECTURES
from transformers import AutoModelForMaskedLM, AutoTokenizer

from cdsbias.errors import CdsbiasError
from cdsbias.methods.context_debias_data import build_examples, default_attribute_words
from cdsbias.methods.context_debias_loss import ContextDebiasLoss, hidden_states

pytestmark = pytest.mark.usefixtures("one_thread")

MALE = ["he", "man", "father", "brother", "uncle", "husband", "son"]
FEMALE = ["she", "woman", "mother", "sister", "aunt", "wife", "daughter"]
PROFESSIONS = ["nurse", "engineer", "teacher", "judge", "clerk", "mason", "mail clerk"]
CORPUS = [
    "he had a good day.",
    "my father is at work.",
    "this man wants to become a son.",
    "my brother had a good day at work.",
    "she had a good day.",
    "my mother is at work.",
    "this woman wants to become a daughter.",
    "my sister had a good day at work.",
    "the nurse had a good day.",
    "this engineer is at work.",
    "my teacher wants to become a judge.",
    "a mason is at work.",
    "he and she had a good day.",  # both classes: dropped
    "the mother of the nurse is at work.",  # an attribute sentence, not a stereotype one
    "work",  # one word: too short
]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from tiny_models import tiny_masked_lm

    return tiny_masked_lm("bert", tmp_path_factory.mktemp("cd") / "bert")


def load(folder):
    return AutoModelForMaskedLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)


def loss_fn(**options) -> ContextDebiasLoss:
    return ContextDebiasLoss(
        attribute_words=[MALE, FEMALE], stereotype_words=PROFESSIONS, batch_size=8, **options
    )


def test_example_selection(bert):
    _, tokenizer = load(bert)
    examples = build_examples(
        [*CORPUS, "the mail clerk is at work."], tokenizer, [MALE, FEMALE], PROFESSIONS
    )
    assert [len(e) for e in examples.attribute] == [4, 5]
    # Once per distinct stereotype word: "teacher" and "judge" both come from one line.
    assert len(examples.stereotype) == 6
    read = [tokenizer.decode([e.input_ids[p] for p in e.positions]) for e in examples.stereotype]
    assert read == ["nurse", "engineer", "teacher", "judge", "mason", "mail clerk"]
    mother = examples.attribute[1][-1]
    assert tokenizer.decode([mother.input_ids[p] for p in mother.positions]) == "mother"
    male, female = default_attribute_words()
    assert {"he", "his", "him", "father"} <= set(male)
    assert {"she", "her", "hers", "mother"} <= set(female)


def test_zero_weights_and_step_zero(bert):
    model, tokenizer = load(bert)
    off = loss_fn(alpha=0.0, beta=0.0).prepare(model, tokenizer, CORPUS)
    terms = off.loss_terms(model)
    assert float(terms["debias"]) == 0.0 and float(terms["preserve"]) == 0.0
    # Before any step the model is the original: the preservation term is exactly zero.
    on = loss_fn().prepare(model.eval(), tokenizer, CORPUS)
    attribute = [e for kind in on.examples.attribute for e in kind]
    with torch.no_grad():
        assert float(on.preserve_term(model, attribute)) == 0.0
        assert float(on.debias_term(model, on.examples.stereotype)) > 0.0


def test_debias_term_by_hand(bert):
    """Token level, last layer: mean over words of Σ_a ⟨h(t), v(a)⟩², v the mean state of
    the class's attribute words."""
    model, tokenizer = load(bert)
    fn = loss_fn(layers="last").prepare(model.eval(), tokenizer, CORPUS)

    def states(example):
        ids = torch.tensor([example.input_ids])
        with torch.no_grad():
            layer = hidden_states(model, ids, torch.ones_like(ids))[0, :, -1]
        return layer[list(example.positions)].mean(0)

    vectors = [torch.stack([states(e) for e in kind]).mean(0) for kind in fn.examples.attribute]
    expected = torch.stack(
        [sum(torch.dot(states(e), v) ** 2 for v in vectors) for e in fn.examples.stereotype]
    ).mean()
    with torch.no_grad():
        got = fn.debias_term(model, fn.examples.stereotype)
    assert float(got) == pytest.approx(float(expected), rel=1e-4)
    sentence = loss_fn(level="sentence", layers="first").prepare(model, tokenizer, CORPUS)
    with torch.no_grad():
        assert float(sentence.debias_term(model, sentence.examples.stereotype)) > 0


def test_planted_direction_is_removed(bert, caplog):
    """Stereotype words embedded like "he": N steps cut |⟨h(t), v(a)⟩| by >= 90% while the
    states of attribute sentences stay close to the original's."""
    model, tokenizer = load(bert)
    torch.manual_seed(0)
    embeddings = model.get_input_embeddings().weight
    with torch.no_grad():
        he = tokenizer.convert_tokens_to_ids("he")
        for word in PROFESSIONS[:6]:
            index = tokenizer.convert_tokens_to_ids(word)
            embeddings[index] = embeddings[he] + 0.1 * embeddings[index]
    with caplog.at_level(logging.INFO, logger="cdsbias.methods.context_debias_loss"):
        fn = loss_fn().prepare(model.eval(), tokenizer, CORPUS)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    assert fn.original_bytes >= params
    assert f"{fn.original_bytes} bytes" in caplog.text

    def projection() -> float:
        with torch.no_grad():
            words = fn._word_states(model.eval(), fn.examples.stereotype)
            return float(torch.einsum("blh,nlh->bnl", words, fn.vectors).abs().mean())

    attribute = [e for kind in fn.examples.attribute for e in kind]
    before = projection()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for _ in range(60):
        model.train()
        loss = fn.total(fn.loss_terms(model))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    after = projection()
    assert after <= 0.1 * before, (before, after)
    with torch.no_grad():
        drift = float(fn.preserve_term(model.eval(), attribute))
        ids = torch.tensor([attribute[0].input_ids])
        scale = float((fn.original_states(model, ids, torch.ones_like(ids)) ** 2).mean())
    assert drift < 0.3 * scale, (drift, scale)


def test_the_frozen_copy_follows_the_model_where_the_trainer_places_it(bert):
    """The copy is made before the Trainer (accelerate) places the model: cast to float64
    afterwards (as a move to another dtype or device), the preservation term reads the copy
    in the model's dtype, so at step 0 it is exactly zero, and the copy stays frozen."""
    model, tokenizer = load(bert)
    fn = loss_fn().prepare(model.eval(), tokenizer, CORPUS)
    frozen = fn._original
    assert next(frozen.parameters()).dtype == torch.float32
    model.to(torch.float64)
    attribute = [e for kind in fn.examples.attribute for e in kind]
    with torch.no_grad():
        assert float(fn.preserve_term(model, attribute)) == 0.0  # float32 copy: about 1e-15
    assert {p.dtype for p in frozen.parameters()} == {torch.float64}
    assert not frozen.training and not any(p.requires_grad for p in frozen.parameters())
    # A device works the same way: a model on the meta device (no forward pass runs there)
    # gets its copy moved to it before the copy is read.
    model.to("meta")
    assert fn._placed_copy(model) is frozen
    assert {p.device.type for p in frozen.parameters()} == {"meta"}
    assert not frozen.training and not any(p.requires_grad for p in frozen.parameters())


def test_lora_original_states_are_the_base_models_bit_for_bit(bert):
    from peft import LoraConfig, get_peft_model

    base, tokenizer = load(bert)
    with warnings.catch_warnings():  # peft asks a transformers 5 API it deprecated
        warnings.filterwarnings("ignore", ".*is_gradient_checkpointing", FutureWarning)
        model = get_peft_model(load(bert)[0], LoraConfig(r=4, target_modules=["query", "value"]))
    torch.manual_seed(1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.5)  # an adapter that has trained
    fn = loss_fn().prepare(model, tokenizer, CORPUS)
    assert fn.original_bytes == 0
    ids, attention, _ = fn._batch(fn.examples.stereotype, "cpu")
    with torch.no_grad():
        expected = hidden_states(base.eval(), ids, attention)
        adapted = hidden_states(model.eval(), ids, attention)
    assert torch.equal(fn.original_states(model, ids, attention), expected)
    assert not torch.equal(adapted, expected)


def test_bottleneck_original_states_are_the_base_models_bit_for_bit(bert):
    from cdsbias.methods.bottleneck import adapters, add_bottleneck_adapters

    base, tokenizer = load(bert)
    model = load(bert)[0]
    add_bottleneck_adapters(model, reduction_factor=4)
    torch.manual_seed(2)
    with torch.no_grad():
        for adapter in adapters(model).values():
            adapter.up.weight.normal_(std=0.5)
    fn = loss_fn().prepare(model, tokenizer, CORPUS)
    assert fn.original_bytes == 0
    ids, attention, _ = fn._batch(fn.examples.attribute[0], "cpu")
    with torch.no_grad():
        expected = hidden_states(base.eval(), ids, attention)
        adapted = hidden_states(model.eval(), ids, attention)
    assert torch.equal(fn.original_states(model, ids, attention), expected)
    assert not torch.equal(adapted, expected)
    assert all(adapter.enabled for adapter in adapters(model).values())


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_every_architecture(zoo, arch):
    """hidden_states of every supported family: embedding output + one entry per layer, and
    the loss reaches the weights."""
    model, tokenizer = load(zoo[arch])
    fn = loss_fn().prepare(model, tokenizer, CORPUS)
    layers = model.config.num_hidden_layers + 1
    assert tuple(fn.vectors.shape) == (2, layers, model.config.hidden_size)
    terms = fn.loss_terms(model)
    fn.total(terms).backward()
    assert float(terms["debias"]) > 0 and torch.isfinite(terms["preserve"])
    assert model.get_input_embeddings().weight.grad is not None


def test_bad_input(bert):
    model, tokenizer = load(bert)
    with pytest.raises(CdsbiasError, match="stereotype 0, attribute 0: 4, attribute 1: 4"):
        loss_fn().prepare(model, tokenizer, CORPUS[:8])
    with pytest.raises(CdsbiasError, match="context_debias_layers"):
        ContextDebiasLoss(layers="middle")  # type: ignore[arg-type]
    with pytest.raises(CdsbiasError, match="context_debias_alpha"):
        ContextDebiasLoss(alpha=-1)


def test_a_word_file_line_with_several_words_names_the_file_and_line(tmp_path):
    """A line "he,him,his" would be matched as one three-word phrase that no sentence
    holds, and the run would blame the corpus; the file is refused at the line instead."""
    from cdsbias.methods.context_debias_data import read_word_file

    words = tmp_path / "male.txt"
    words.write_text("# male words\nhe\n\nhim; his\n", encoding="utf-8")
    with pytest.raises(CdsbiasError) as caught:
        read_word_file(words)
    assert str(caught.value) == (
        f"{words}, line 4: 'him; his' holds several words joined by a semicolon; a word list "
        "has one word (or phrase) per line, so put 'him', 'his' on lines of their own."
    )
    words.write_text("he,him,his\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"line 1: 'he,him,his' .* joined by a comma"):
        read_word_file(words)
    table = tmp_path / "words.tsv"
    table.write_text("male\tfemale\nhe\tshe\nhim,his\ther\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"words.tsv, line 3: 'him,his'"):
        read_word_file(table, column="male")
    assert read_word_file(table, column="female") == ["she", "her"]
    words.write_text("steel worker\nHe\n", encoding="utf-8")  # a phrase is one entry
    assert read_word_file(words) == ["steel worker", "he"]
