"""The German and Danish occupational corpora, their recipe keys, and BEC-Pro's
``target=profession`` score (the measure that sees a bias German forms give away)."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from cdsbias.benchmarks.becpro import BecPro
from cdsbias.benchmarks.becpro_data import generate_english
from cdsbias.cds.languages import get_language
from cdsbias.data import occupations_da, occupations_de
from cdsbias.data.occupations import occupational_sentences, person_words
from cdsbias.demo.base_model import DemoModelSettings
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.train.config import load_recipe


def test_english_corpus_and_demo_fingerprint_are_unchanged():
    # The English demo's numbers rest on these: the first 60,000 sentences of seed 0 and
    # the cache key of the default demo model, as they were before languages were added.
    text = "\n".join(occupational_sentences(60_000, 0))
    assert hashlib.md5(text.encode()).hexdigest() == "de410d11900c6a1929e5322a4f2b5180"
    assert DemoModelSettings().fingerprint() == DemoModelSettings(language="en").fingerprint()
    assert DemoModelSettings(language="de").fingerprint() != DemoModelSettings().fingerprint()


def test_german_sentences_follow_german_shares_and_agree():
    sentences = occupational_sentences(30_000, 5, "de")
    # The form gives the gender: Kindergärtnerin (female) contains Kindergärtner (male).
    for male_form, share in (("Trockenbaumonteur", 0.0672), ("Kindergärtner", 0.7936)):
        mentions = [s for s in sentences if male_form in s]
        female = [s for s in mentions if f"{male_form}in" in s]
        observed = len(female) / len(mentions)
        assert abs(observed - share) < 4 * math.sqrt(share * (1 - share) / len(mentions))
        # every female mention has a female person or pronoun, every male one a male one
        assert all(({"sie", "ihr", "ihren", "Sie", "Die"} | {"meine", "Meine", "diese", "Diese"})
                   & set(s.replace(",", "").split()) for s in female)  # fmt: skip
        assert not any(f"{male_form}in" in s or " sie " in s for s in set(mentions) - set(female))


def test_german_definite_form_weakens_the_adjective():
    assert occupations_de._definite("Postbeamter", "male") == "der Postbeamte"
    assert occupations_de._definite("staatlich geprüfter Krankenpfleger", "male") == (
        "der staatlich geprüfte Krankenpfleger"
    )
    assert occupations_de._definite("medizinische Wissenschaftlerin", "female") == (
        "die medizinische Wissenschaftlerin"
    )
    assert occupations_de._definite("Mechaniker für mobile Geräte", "male") == (
        "der Mechaniker für mobile Geräte"
    )


def test_german_cds_with_and_without_agreement_on_corpus_sentences():
    sentence = "Alle sagen, dass mein Bruder ein erfahrener Elektriker ist."
    assert get_language("de").substitute(sentence) == (
        "Alle sagen, dass meine Schwester eine erfahrene Elektrikerin ist."
    )
    assert get_language("de", agreement=False).substitute(sentence) == (
        "Alle sagen, dass mein Schwester ein erfahrener Elektrikerin ist."
    )


def test_danish_sentences_use_listed_occupations_and_swap_cleanly():
    occupations = occupations_da.load_danish_occupations()
    assert len(occupations) == 68
    assert ("pædagog", "pædagogen", "female") in occupations  # upstream typo corrected
    danish = get_language("da")
    listed = {o for row in occupations for o in row[:2]}
    for sentence in occupational_sentences(500, 2, "da"):
        words = {w.strip(".,").lower() for w in sentence.split()}
        assert words & listed, sentence
        swapped = danish.substitute(sentence)
        assert swapped != sentence and danish.substitute(swapped) == sentence
    # no occupation the Danish CDS itself swaps (the person words carry the gender)
    assert not listed & danish.known_words
    assert {"han", "hun", "hans", "hendes", "ham", "hende"} <= person_words("da")


def test_danish_share_follows_the_stereotype():
    rows = occupations_da.load_danish_occupations()
    stereotype = {form: s for o, d, s in rows for form in (o, d)}
    female = Counter()
    total = Counter()
    for sentence in occupational_sentences(20_000, 3, "da"):
        words = [w.strip(".,").lower() for w in sentence.split()]
        group = next(stereotype[w] for w in words if w in stereotype)
        total[group] += 1
        female[group] += bool({"hun", "hendes", "hende", "kvinde", "søster", "datter", "mor",
                               "tante", "kusine"} & set(words))  # fmt: skip
    for group, share in occupations_da.SHARE_FEMALE.items():
        assert abs(female[group] / total[group] - share) < 0.02


def test_unknown_language_is_one_line():
    with pytest.raises(CdsbiasError, match="Did you mean 'de'"):
        occupational_sentences(3, 0, "dee")


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (["occupation_language=de"], "cds_language is 'en'"),
        (["occupation_language=sv", "cds_language=en"], "has no occupational corpus"),
        (["cds_agreement=false"], "German's naive variant"),
    ],
)
def test_recipe_language_keys_are_checked(keys, message, tmp_path):
    base = ["dataset=occupations", f"output_dir={tmp_path}", "use_cpu=true"]
    with pytest.raises(CdsbiasError, match=message):
        load_recipe(None, [*base, *keys])


def test_naive_variant_reaches_the_mapper(tmp_path):
    from cdsbias.train.data import counterfactual_mapper

    recipe = load_recipe(
        None,
        ["dataset=occupations", "occupation_language=de", "cds_language=de",
         "cds_agreement=false", f"output_dir={tmp_path}", "use_cpu=true"],
    )  # fmt: skip
    mapper = counterfactual_mapper(recipe.cds, ["id"])
    assert mapper.substituter.agreement is False
    assert mapper.substituter.substitute("Er ist ein guter Elektriker.") == (
        "Sie ist ein guter Elektrikerin."
    )


def test_profession_target_equals_direct_chain_rule_logits(real_vocab_bert):
    model = AutoModelForMaskedLM.from_pretrained(real_vocab_bert).eval()
    tokenizer = AutoTokenizer.from_pretrained(real_vocab_bert)
    rows = generate_english().iloc[[0, 905, 1850, 4321]].reset_index(drop=True)
    scored = BecPro(target="profession").score(MaskedLMScorer(model, tokenizer), rows)

    def chain_rule(sentence: str, profession: str) -> float:
        ids = tokenizer(sentence)["input_ids"]
        pieces = tokenizer(profession, add_special_tokens=False)["input_ids"]
        start = next(i for i in range(len(ids)) if ids[i : i + len(pieces)] == pieces)
        masked = list(ids)
        for k in range(len(pieces)):
            masked[start + k] = tokenizer.mask_token_id
        total = 0.0
        for k, piece in enumerate(pieces):  # left to right, earlier pieces shown
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([masked])).logits[0, start + k]
            total += float(torch.log_softmax(logits.double(), -1)[piece])
            masked[start + k] = piece
        return total

    for row in scored.itertuples():
        assert row.association == pytest.approx(chain_rule(row.Sentence, row.Profession), abs=1e-5)


def test_profession_target_refuses_bartl2020():
    with pytest.raises(CdsbiasError, match="drop target=profession"):
        BecPro(compat="bartl2020", target="profession")
