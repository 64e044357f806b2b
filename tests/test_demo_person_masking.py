"""The demo model's pre-training masks every language's person words and pronouns at the
person rate, and the words it must associate are whole pieces of the demo vocabulary."""

from __future__ import annotations

import math
from collections import Counter

import pytest
import torch

from cdsbias.data.occupations import occupational_sentences, person_words
from cdsbias.data.occupations_da import SHARE_FEMALE, load_danish_occupations
from cdsbias.demo.base_model import PersonMaskingCollator, _person_token_ids
from cdsbias.train.wordpiece import train_wordpiece

DANISH_PRONOUNS = {"han", "hun", "ham", "hende", "hans", "hendes"}


@pytest.fixture(scope="module")
def danish_tokenizer():
    return train_wordpiece(occupational_sentences(3000, 0, "da"), vocab_size=2000)


@pytest.mark.parametrize("language", ["en", "de", "da"])
def test_every_person_word_is_one_piece_and_masked_at_the_person_rate(language):
    tokenizer = train_wordpiece(occupational_sentences(3000, 0, language), vocab_size=2000)
    words = person_words(language)
    ids = _person_token_ids(tokenizer, language)
    # One id per word: none is split (a split word would be masked at the ordinary rate).
    # German "sie"/"Sie" and "ihr" are the same lower-cased piece for both uses.
    assert len(ids) == len({w.lower() for w in words})
    assert ids == {tokenizer.convert_tokens_to_ids(w.lower()) for w in words}


def test_danish_pronouns_and_occupations_are_whole_pieces(danish_tokenizer):
    assert person_words("da") >= DANISH_PRONOUNS
    vocab = danish_tokenizer.get_vocab()
    # Lower-cased and accent-stripped like the tokenizer does (rådgiver -> radgiver).
    for indefinite, definite, _ in load_danish_occupations():
        for form in (indefinite, definite):
            assert danish_tokenizer.tokenize(form) == [
                danish_tokenizer.backend_tokenizer.normalizer.normalize_str(form)
            ]
            assert danish_tokenizer.tokenize(form)[0] in vocab


def test_danish_pronouns_are_masked_at_half_and_other_tokens_at_the_mlm_rate(danish_tokenizer):
    collator = PersonMaskingCollator(
        danish_tokenizer, _person_token_ids(danish_tokenizer, "da"), 0.15, 0.5
    )
    sentences = occupational_sentences(2000, 7, "da")
    features = [{"input_ids": danish_tokenizer(s)["input_ids"]} for s in sentences]
    torch.manual_seed(0)
    batch = collator(features)
    original = danish_tokenizer.pad(features, return_tensors="pt")["input_ids"]
    masked = batch["labels"] != -100
    pronoun_ids = torch.tensor(danish_tokenizer.convert_tokens_to_ids(sorted(DANISH_PRONOUNS)))
    person = torch.isin(original, torch.tensor(sorted(collator.person_ids.tolist())))
    pronoun = torch.isin(original, pronoun_ids)
    special = torch.isin(original, torch.tensor(danish_tokenizer.all_special_ids))
    other = ~person & ~special
    assert pronoun.sum() > 1000 and (pronoun & person).sum() == pronoun.sum()
    # Binomial standard errors: 0.5 over > 1,000 pronouns (< 0.016), 0.15 over > 10,000.
    assert abs(masked[pronoun].float().mean().item() - 0.5) < 0.05
    assert abs(masked[person].float().mean().item() - 0.5) < 0.04
    assert abs(masked[other].float().mean().item() - 0.15) < 0.01
    assert not masked[special].any()
    # The labels are the original tokens.
    assert torch.equal(batch["labels"][masked], original[masked])


def test_danish_corpus_gender_follows_each_occupations_list():
    # Per occupation, not only per list: every occupation's person is female with its
    # list's share (0.9 female-stereotyped, 0.1 male), read from the gendered words.
    rows = load_danish_occupations()
    occupation_of = {form: o for o, d, _ in rows for form in (o, d)}
    share = {o: SHARE_FEMALE[s] for o, _, s in rows}
    female_words = {"hun", "hende", "hendes", "kvinde", "søster", "datter", "mor", "tante",
                    "kusine"}  # fmt: skip
    male_words = person_words("da") - female_words
    female, total = Counter(), Counter()
    for sentence in occupational_sentences(20_000, 11, "da"):
        words = {w.strip(".,").lower() for w in sentence.split()}
        (occupation,) = {occupation_of[w] for w in words if w in occupation_of}
        is_female = bool(words & female_words)
        assert is_female != bool(words & male_words), sentence  # one gender per sentence
        female[occupation] += is_female
        total[occupation] += 1
    assert set(total) == set(share)
    for occupation, n in total.items():
        p = share[occupation]
        assert abs(female[occupation] / n - p) < 4 * math.sqrt(p * (1 - p) / n), occupation


def test_danish_model_is_initialised_as_a_64_position_model():
    # The position table's size shifts every later weight's random initialisation; the
    # Danish model keeps the 64-position one (docs/demo.md) and only adds rows.
    from transformers import BertConfig, BertForMaskedLM

    from cdsbias.demo.base_model import _with_positions

    config = BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    torch.manual_seed(0)
    model = BertForMaskedLM(config)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    longer = _with_positions(model, 256)
    after = longer.state_dict()
    table = "bert.embeddings.position_embeddings.weight"
    assert longer.config.max_position_embeddings == 256 and after[table].shape == (256, 16)
    assert torch.equal(after[table][:64], before[table])
    assert all(torch.equal(after[k], v) for k, v in before.items() if k != table)
    assert longer.cls.predictions.decoder.weight is longer.bert.embeddings.word_embeddings.weight
    ids = torch.tensor([list(range(1, 41)) * 2])  # 80 positions: a long DaWinoBias sentence
    assert longer(input_ids=ids).logits.shape == (1, 80, 50)
