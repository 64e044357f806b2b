"""bias-bench's own word lists as axis variants (``race@bias-bench``; issue 34, item 5).

bias-bench (McGill-NLP/bias-bench, Meade et al. 2022) chooses its fit sentences with
``data/bias_attribute_words.json``. Issue 34 measured, with bias-bench's code on the same
sentences and bert-base-uncased, that cdsbias's revised race and religion lists turn the
SentenceDebias direction to |cos| 0.48 and 0.27 of the one bias-bench's lists give. Here:
the variants carry that file's tuples exactly; on a seeded tiny BERT and a fixed sentence
set the two race lists give different directions, while the variant's fit equals the one
bias-bench's procedure computes from its own list (its ``_race_augment_func`` /
``_religion_augment_func`` and ``compute_race_subspace``, written out below from their
description); and the variant works where an axis works (INLP, LEACE, CDA, a run's records
and card).
"""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np
import pytest

from cdsbias import resources
from cdsbias.axes import AXES, get_axis
from cdsbias.axes.bias_bench import FILE, LISTS
from cdsbias.errors import CdsbiasError
from cdsbias.methods.fit_sentences import axis_fit_words, binary_inlp
from cdsbias.train.posthoc_fit import fit_posthoc

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
    pytest.mark.filterwarnings("ignore::cdsbias.scoring.language.LanguageMismatchWarning"),
]

#: SHA-256 of ``data/bias_attribute_words.json`` at bias-bench commit aba44032 (the file's
#: last change, 2022-03-23): the shipped copy is that file, byte for byte.
BIAS_BENCH_SHA256 = "221f9f997b6eee90c4b5791c6f60771fb91bbbe3631ac07a010bd8b026e50dbc"
#: bias-bench encodes SentenceDebias's sentences in batches of 32 and drops a last partial
#: batch (``n_batches = len(data) // batch_size``); both fits below read this many sets.
BATCH = 32
SETS = 3 * BATCH
#: Largest sine between the variant's direction and bias-bench's (see the test's comment).
PARITY = 1e-4


def shipped() -> dict[str, list[list[str]]]:
    return json.loads(resources.resource_path("axes", FILE).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------ the variants
def test_shipped_file_is_bias_benchs_byte_for_byte():
    data = resources.resource_path("axes", FILE).read_bytes()
    assert hashlib.sha256(data).hexdigest() == BIAS_BENCH_SHA256


@pytest.mark.parametrize("key", ["gender", "race", "religion"])
def test_variant_tuples_equal_the_shipped_json_exactly(key):
    variant = get_axis(f"{key}@{LISTS}")
    # Order, repeats ("black" twice, "asian" three times) and spelling ("mr.") as published.
    assert [list(words) for words in variant.tuples] == shipped()[key]
    base = get_axis(key)
    assert variant.name == f"{key}@{LISTS}" and variant.variant_of == key == variant.base_name
    assert variant.word_lists == "bias-bench" and base.word_lists == "cdsbias"
    assert variant.tuples != base.tuples  # cdsbias's lists differ on every axis, gender too
    for same in ("groups", "self_debias_prefix", "seat_tests", "crows_pairs_category",
                 "stereoset_domain"):  # fmt: skip
        assert getattr(variant, same) == getattr(base, same)
    assert variant.languages == ("en",)
    assert variant.record()["word_lists"] == "bias-bench"
    assert variant.record()["hash"] != base.record()["hash"]


def test_every_registered_variant_names_its_lists_through_the_axis():
    variants = [name for name in AXES if get_axis(name).variant_of is not None]
    assert sorted(variants) == ["gender@bias-bench", "race@bias-bench", "religion@bias-bench"]
    assert {get_axis(name).word_lists for name in variants} == {"bias-bench"}


def test_user_file_lists_and_unknown_variant(tmp_path):
    path = tmp_path / "words.json"
    path.write_text(json.dumps({"race": shipped()["race"]}))
    own = get_axis(str(path))
    assert own.word_lists == "file" and own.variant_of is None
    with pytest.raises(CdsbiasError, match="Did you mean 'race@bias-bench'"):
        get_axis("race@biasbench")


def test_gender_variant_is_english_and_keeps_gender_fit_rules():
    variant = get_axis("gender@bias-bench")
    variant.check_language("en", ("gender",))
    with pytest.raises(CdsbiasError, match="The CDS language 'de' has no 'gender@bias-bench'"):
        variant.check_language("de", ("gender",))
    pairs = axis_fit_words(variant)
    assert ("mr.", "mrs.") in pairs.pairs and not binary_inlp(pairs)  # gender's 3 classes
    assert binary_inlp(axis_fit_words(get_axis("race@bias-bench")))


# ------------------------------------------------- SentenceDebias against bias-bench's loop
# Development sentences of our own: each names people or places with a word of cdsbias's or
# bias-bench's race and religion lists (mid-sentence: bias-bench matches space-split words).
RACE_WORDS = ["black", "white", "caucasian", "african", "asian", "blacks", "whites", "asians",
              "africans", "caucasians", "africa", "america", "china", "europe", "asia"]  # fmt: skip
RELIGION_WORDS = ["jewish", "christian", "muslim", "jew", "jews", "christians", "muslims",
                  "torah", "bible", "quran", "synagogue", "church", "mosque", "rabbi", "priest",
                  "imam", "judaism", "christianity", "islam", "rabbis", "priests", "imams",
                  "synagogues", "churches", "mosques", "torahs", "bibles", "qurans"]  # fmt: skip
FRAMES = ["the {} neighbours came to the party last night", "my friend wrote about {} history",
          "a new book on {} people was in the shop", "they talked about the {} family for hours",
          "she moved from {} to the city last year",
          "we read that {} students work hard"]  # fmt: skip


def sentences(words: list[str], n: int = 240, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(FRAMES).format(rng.choice(words)).capitalize() + "." for _ in range(n)]


def bias_bench_augment(text: str, attribute_words: list[list[str]]) -> list[dict[str, str]]:
    """``_race_augment_func`` (``_religion_augment_func`` is the same): for each tuple in
    order, for each of its three words found among the space-split words, the sentence with
    that word and its copies with every occurrence replaced by the tuple's other words."""
    words = text.split(" ")

    def swap(old: str, new: str) -> str:
        return " ".join(new if word == old else word for word in words)

    examples = []
    for r1, r2, r3 in attribute_words:
        if r1 in words:
            examples.append({"r1": text, "r2": swap(r1, r2), "r3": swap(r1, r3)})
        if r2 in words:
            examples.append({"r1": swap(r2, r1), "r2": text, "r3": swap(r2, r3)})
        if r3 in words:
            examples.append({"r1": swap(r3, r1), "r2": swap(r3, r2), "r3": text})
    return examples


def bias_bench_direction(folder, texts: list[str], attribute_words: list[list[str]]):
    """bias-bench's SentenceDebias direction for three groups: the sets of
    :func:`bias_bench_augment` over the lower-cased, stripped sentences (the first
    :data:`SETS`); ``compute_race_subspace``: batches of 32 padded to 128 tokens, the
    attention-masked mean of the bare encoder's last hidden state, L2-normalised; each set
    centred on its 3-way mean, the groups stacked, ``PCA(n_components=1)``'s component."""
    import torch
    from sklearn.decomposition import PCA
    from transformers import AutoModel, AutoTokenizer

    data = []
    for text in texts:
        data += bias_bench_augment(text.lower().strip(), attribute_words)
    data = data[:SETS]
    assert len(data) == SETS  # whole batches: bias-bench's dropped tail is empty
    encoder = AutoModel.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    groups = {"r1": [], "r2": [], "r3": []}
    for offset in range(0, len(data) // BATCH * BATCH, BATCH):
        for key, rows in groups.items():
            inputs = tokenizer([e[key] for e in data[offset : offset + BATCH]],
                               return_tensors="pt", truncation=True, padding="max_length",
                               max_length=128)  # fmt: skip
            mask = inputs["attention_mask"]
            with torch.no_grad():
                hidden = encoder(input_ids=inputs["input_ids"], attention_mask=mask)
            embedding = (hidden["last_hidden_state"] * mask.unsqueeze(-1)).sum(dim=1)
            embedding /= mask.sum(dim=1, keepdims=True)
            embedding /= torch.norm(embedding, dim=-1, keepdim=True)
            rows.append(embedding.numpy())
    r1, r2, r3 = (np.concatenate(rows, axis=0) for rows in groups.values())
    means = (r1 + r2 + r3) / 3.0
    stacked = np.concatenate([r1 - means, r2 - means, r3 - means], axis=0)
    return PCA(n_components=1).fit(stacked).components_[0]


def sine(u: np.ndarray, v: np.ndarray) -> float:
    """The sine of the angle between two lines (sign-free): ``|v − (u·v) u|`` of unit vectors,
    accurate for tiny angles where ``1 − cos`` is not."""
    u, v = u / np.linalg.norm(u), v / np.linalg.norm(v)
    return float(np.linalg.norm(v - (u @ v) * u))


@pytest.fixture(scope="module")
def race_model(tmp_path_factory):
    """A seeded tiny BERT whose tokenizer knows every race and religion word, and its scorer."""
    from tiny_models import WORDS, tiny_masked_lm
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from cdsbias.scoring import MaskedLMScorer

    folder = tiny_masked_lm("bert", tmp_path_factory.mktemp("bias-bench-lists") / "bert",
                            words=[*WORDS, *RACE_WORDS, *RELIGION_WORDS])  # fmt: skip
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    return folder, MaskedLMScorer(model, AutoTokenizer.from_pretrained(folder), batch_size=32)


def our_direction(scorer, texts: list[str], axis_name: str, cap: int | None = SETS) -> np.ndarray:
    """cdsbias's SentenceDebias direction on ``axis_name``'s lists, on the first ``cap`` sets."""
    axis = get_axis(axis_name)
    erasure = fit_posthoc(scorer, texts, "sentence_debias", pairs=axis_fit_words(axis),
                          max_pairs=cap, axis=axis)  # fmt: skip
    assert erasure.details["bias_axis"]["word_lists"] == axis.word_lists
    return np.asarray(erasure.details["components"][0])


@pytest.mark.parametrize(("key", "words"), [("race", RACE_WORDS), ("religion", RELIGION_WORDS)])
def test_sentence_debias_on_bias_benchs_lists_equals_its_procedure(race_model, key, words):
    """The variant's fit is bias-bench's on its own list: the same direction to float32
    rounding; cdsbias's revised list gives another direction on the same sentences."""
    folder, scorer = race_model
    texts = sentences(words)
    expected = bias_bench_direction(folder, texts, shipped()[key])
    variant = our_direction(scorer, texts, f"{key}@{LISTS}")
    # Both sides embed the same sentences in float32 with differently shaped batches (128
    # padded tokens vs length-sorted batches), so the embeddings agree to a few eps32; the
    # direction moves by that over the gap between the first two principal values (measured
    # sin 1.7e-6 race, 1.1e-6 religion); 1e-4 leaves room for other instruction sets.
    assert sine(expected, variant) < PARITY
    # cdsbias's revised list, on every sentence (as bias-bench reads its whole file): another
    # direction, by far more than rounding. bert-base-uncased on Wikipedia: |cos| 0.48 race,
    # 0.27 religion (issue 34); this random tiny model: |cos| 0.82 race, 0.99 religion (sin
    # 0.57 and 0.16; religion's lists share their six tuples, cdsbias adds nouns and plurals).
    own = our_direction(scorer, texts, key, cap=None)
    assert sine(own, our_direction(scorer, texts, f"{key}@{LISTS}", cap=None)) > 100 * PARITY


# ------------------------------------------------------------ everywhere an axis works
def test_cda_substitutes_bias_benchs_words():
    """n-ary CDA on a variant reads bias-bench's tuples ("america" is a race word there, not
    in cdsbias's list; gender's pairs include "mr."/"mrs.")."""
    from cdsbias.cds.axis_corpus import AxisCounterfactualMapper

    text = {"text": ["They moved to America from Africa last year."]}
    ours = AxisCounterfactualMapper("text", axis="race", counterfactuals="all")(text)
    assert [t for t in ours["text"] if "America" not in t] == []  # not a race word here
    theirs = AxisCounterfactualMapper("text", axis="race@bias-bench", counterfactuals="all")(text)
    assert theirs["text"][1:] == ["They moved to Asia from America last year.",
                                  "They moved to Africa from Asia last year."]  # fmt: skip
    gender = AxisCounterfactualMapper("text", axis="gender@bias-bench")(
        {"text": ["the actor met mr. smith and his wife."]}
    )
    assert gender["text"][1] == "the actress met mrs. smith and her husband."


@pytest.mark.parametrize("method", ["inlp", "leace"])
def test_inlp_and_leace_fit_on_a_variant(race_model, method):
    _, scorer = race_model
    neutral = [f"The {job} met a friend at the school on day {i}." for i in range(40)
               for job in ("nurse", "clerk")]  # fmt: skip
    axis = get_axis("race@bias-bench")
    erasure = fit_posthoc(scorer, [*sentences(RACE_WORDS, 80), *neutral], method,
                          pairs=axis_fit_words(axis), iterations=2, per_class=40,
                          min_per_class=5, axis=axis)  # fmt: skip
    assert erasure.details["bias_axis"] == axis.record()
    assert erasure.details["bias_axis"]["word_lists"] == "bias-bench"
    # bias-bench's race INLP: attribute vs neutral; LEACE: one class per group + neutral.
    expected = {"bias", "neutral"} if method == "inlp" else {*axis.groups, "neutral"}
    assert set(erasure.sentences_per_class) == expected


def test_evaluate_axis_scores_a_variant(tiny_bert, tmp_path):
    from test_bench_axes import axis_fixtures

    from cdsbias.benchmarks.axis_scope import result_key
    from cdsbias.cli import main

    crows = axis_fixtures(tmp_path / "data")["crows_pairs"][0]
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data", str(crows),
                 "--axis", "race@bias-bench", "--out", str(out), "--quiet"])  # fmt: skip
    assert code == 0
    summary = out / "crows_pairs@race@bias-bench" / "summary.json"
    assert result_key(summary.parent.name) == "crows_pairs[race@bias-bench]"
    scored = json.loads(summary.read_text())
    assert scored["bias_type_filter"] == "race-color"
    # CrowS-Pairs reads no word lists: the variant scores its base axis's category.
    code = main(["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data", str(crows),
                 "--axis", "race", "--out", str(out / "race"), "--quiet"])  # fmt: skip
    base = json.loads((out / "race" / "crows_pairs@race" / "summary.json").read_text())
    assert code == 0 and scored["overall"] == base["overall"]


def test_a_run_on_a_variant_records_its_word_lists(tmp_path, becpro, base):
    """A SentenceDebias run on ``race@bias-bench`` measuring that axis: posthoc_fit.json,
    run_info.json and the card's Bias axes section say the word lists were bias-bench's;
    the hub results name the axis."""
    from test_bench_axes import axis_fixtures
    from test_methods_contract import axis_run_keys
    from tests_helpers import SMOKE, overrides

    from cdsbias.runs.card import model_card
    from cdsbias.runs.folder import RunFolder
    from cdsbias.train.config import load_recipe
    from cdsbias.train.run import run

    crows = axis_fixtures(tmp_path / "data")["crows_pairs"][0]
    out = tmp_path / "run"
    given = overrides(out, becpro, "init_from_scratch=false", f"model_name_or_path={base}",
                      "posthoc_method=sentence_debias", "posthoc_only=true",
                      f"bias_benchmarks={{crows_pairs: {{data_file: {crows}}}}}",
                      "bias_axes=[race@bias-bench]",
                      *axis_run_keys("race@bias-bench", tmp_path))  # fmt: skip
    run(load_recipe(SMOKE, [k for k in given if not k.startswith("occupation_sentences=")]))
    axis = get_axis("race@bias-bench")
    folder = RunFolder(out)
    assert folder.fit_record()["details"]["bias_axis"] == axis.record()
    info = json.loads((out / "run_info.json").read_text())
    assert info["bias_axis"]["word_lists"] == "bias-bench"
    assert info["bias_axis"]["hash"] == axis.hash
    card = str(model_card(out, "org/race-bias-bench"))
    assert "Debiased for: **race@bias-bench** (word lists: bias-bench)." in card
    assert "| race@bias-bench |" in card and "race@bias-bench bias" in card


def test_gender_variant_scores_gender_only_benchmarks_without_a_warning():
    """``--axis gender@bias-bench`` measures gender: a gender-only benchmark is not warned
    about (``--axis race@bias-bench`` is)."""
    import warnings

    from cdsbias.cli import build_parser
    from cdsbias.commands.evaluate import build_benchmarks

    def build(axis: str) -> list[str]:
        args = build_parser().parse_args(["evaluate", "m", "-b", "becpro", "--axis", axis])
        return [b.key for b in build_benchmarks(["becpro"], args)]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert build("gender@bias-bench") == ["becpro"]
    with pytest.warns(UserWarning, match=r"becpro measures gender only: --axis race@bias-bench"):
        build("race@bias-bench")


def test_variant_names_keep_their_hyphen():
    """Hyphens in an axis's own name read as underscores ("sexual-orientation", as
    CrowS-Pairs spells it); the word lists' suffix keeps its own ("race@bias-bench")."""
    from cdsbias.axes import registry_name

    assert registry_name("Race@Bias-Bench") == "race@bias-bench"
    assert registry_name("sexual-orientation") == "sexual_orientation"
    assert get_axis("RACE@bias-bench") is get_axis("race@bias-bench")
