"""The debiasing methods on a bias axis other than gender (issue 27, item 3), each against
bias-bench's computation (McGill-NLP/bias-bench, Meade et al. 2022) written out here from its
formulas: SentenceDebias's k-group subspace (``compute_race_subspace``), INLP's race and
religion sentences and labels (``_load_race_data``, ``_split_binary_dataset``), LEACE's k
classes, Self-Debias's prefix per axis, Context-Debias's attribute classes; bad input."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from test_run_safety import assert_fails_and_keeps, earlier, overwrite  # noqa: F401

from cdsbias.axes import get_axis
from cdsbias.errors import CdsbiasError
from cdsbias.methods import plan_from_values
from cdsbias.methods.attribute_sentences import select_attribute_sentences
from cdsbias.methods.context_debias_data import axis_attribute_words, default_attribute_words
from cdsbias.methods.erasure import group_subspace, leace_eraser, sentence_debias_subspace
from cdsbias.methods.fit_sentences import (
    axis_fit_words,
    binary_inlp,
    load_fit_pairs,
    select_counterfactual_sets,
    select_inlp_sentences,
)
from cdsbias.train.units import split_sentences

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
]


@pytest.fixture
def age_axis(tmp_path):
    """A user's TSV axis of three groups, without a Self-Debias prefix."""
    path = tmp_path / "age.tsv"
    path.write_text("young\tmiddle\told\nyoung\tmiddle-aged\told\nteens\tadults\televated\n")
    return get_axis(str(path))


# --------------------------------------------------------------- SentenceDebias, k groups
def bias_bench_subspace(r1: np.ndarray, r2: np.ndarray, r3: np.ndarray) -> np.ndarray:
    """``compute_race_subspace`` after encoding, transcribed: the k-way mean subtracted,
    the three groups stacked, ``PCA(n_components=1)``'s first component."""
    from sklearn.decomposition import PCA

    means = (r1 + r2 + r3) / 3.0
    stacked = np.concatenate([r1 - means, r2 - means, r3 - means], axis=0)
    return PCA(n_components=1).fit(stacked).components_[0]


def planted_groups(n: int = 40, d: int = 16, seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """Three groups of the same ``n`` sentences, shifted along one unit direction ``u`` by
    −1, 0 and +1 (plus small noise): the group direction is ``u``."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    base = rng.normal(size=(n, d))
    groups = [base + shift * u + 0.01 * rng.normal(size=(n, d)) for shift in (-1.0, 0.0, 1.0)]
    return [g / np.linalg.norm(g, axis=1, keepdims=True) for g in groups], u


def test_k_group_subspace_equals_bias_bench_and_finds_the_planted_direction():
    groups, u = planted_groups()
    erasure = group_subspace(groups, names=("black", "white", "asian"))
    component = np.asarray(erasure.details["components"][0])
    reference = bias_bench_subspace(*groups)
    # Same direction up to sign; the projection I − v vᵀ is sign-free and equal.
    assert abs(float(component @ reference)) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(
        erasure.projection, np.eye(len(u)) - np.outer(reference, reference), atol=1e-12
    )
    # The planted direction, less the lean the L2 normalisation gives it.
    assert abs(float(component @ u)) > 0.9
    # Sign: the first group's mean minus the others' projects non-negatively.
    others = (groups[1] + groups[2]) / 2
    assert float(component @ (groups[0] - others).mean(axis=0)) >= 0
    assert erasure.sentences_per_class == {"sets": 40} and erasure.rank_removed == 1
    # Removing it leaves no group difference along u.
    erased = [erasure.apply(g) for g in groups]
    assert abs(float((erased[0] - erased[2]).mean(axis=0) @ component)) < 1e-12


def test_two_groups_are_the_gender_subspace_exactly():
    groups, _ = planted_groups()
    two = group_subspace(groups[:2], components=2, names=("male", "female"))
    gender = sentence_debias_subspace(groups[0], groups[1], k=2)
    assert np.array_equal(two.projection, gender.projection)
    assert two.details == gender.details and gender.sentences_per_class == {"pairs": 40}


def test_k_group_subspace_errors_name_the_groups():
    groups, _ = planted_groups()
    with pytest.raises(CdsbiasError, match="aligned sets: 40 black and 40 white and 39 asian"):
        group_subspace([groups[0], groups[1], groups[2][:39]], names=("black", "white", "asian"))
    with pytest.raises(CdsbiasError, match="two groups or more"):
        group_subspace(groups[:1])


def bias_bench_augment(sentences: list[str], tuples) -> list[list[str]]:
    """``_race_augment_func`` / ``_religion_augment_func`` for three groups, transcribed."""

    def replace(old, new, words):
        return " ".join(new if word == old else word for word in words)

    out = []
    for text in sentences:
        words = text.split(" ")
        for r1, r2, r3 in tuples:
            if r1 in words:
                out.append([text, replace(r1, r2, words), replace(r1, r3, words)])
            if r2 in words:
                out.append([replace(r2, r1, words), text, replace(r2, r3, words)])
            if r3 in words:
                out.append([replace(r3, r1, words), replace(r3, r2, words), text])
    return out


@pytest.mark.parametrize("name", ["race", "religion"])
def test_counterfactual_sets_equal_bias_bench_augmentation(name):
    axis = get_axis(name)
    docs = [
        f"The {axis.tuples[0][0]} family met a {axis.tuples[0][2]} neighbour. Nothing else.",
        f"Many {axis.tuples[-1][1]} people live here and {axis.tuples[0][1]} ones too.",
        "A sentence about the weather today.",
    ]
    sentences = [s.lower().strip() for doc in docs for s in split_sentences(doc)]
    expected = bias_bench_augment(sentences, axis.tuples)
    chosen = select_counterfactual_sets(docs, axis_fit_words(axis))
    assert [list(row) for row in zip(*chosen.sentences)] == expected
    assert len(chosen) == len(expected) >= 4


# ------------------------------------------------------------------ INLP: race, religion
def bias_bench_binary(documents: list[str], tuples, n_sentences: int, seed: int):
    """bias-bench's ``_load_race_data`` / ``_load_religion_data`` loop, transcribed (its
    nltk splitter and whole-file shuffle replaced by the project's splitter and the given
    order), and ``_split_binary_dataset``'s labels."""
    random.seed(seed)
    token_set = {word for words in tuples for word in words}
    kept, bias, neutral = [], [], []
    for line in documents:
        for sentence in split_sentences(line):
            flag, idx = False, -1
            tokens = [token.lower() for token in sentence.split(" ")]
            if len(tokens) < 5:
                continue
            for token in tokens:
                if token in token_set:
                    flag, idx = True, tokens.index(token)
            if not flag and len(neutral) < n_sentences:
                neutral.append(" ".join(tokens[: random.randint(4, len(tokens))]))
                continue
            if flag and len(bias) < n_sentences and sentence not in kept:
                kept.append(sentence)
                bias.append(" ".join(tokens[: random.randint(idx, len(tokens)) + 1]))
    labels = [1] * len(bias) + [0] * len(neutral)
    return bias, neutral, labels


def axis_documents(axis, n: int = 80, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words = sorted(axis.all_words)
    rest = ["went to the market on monday", "spoke with the nurse about it", "had a long day"]
    subjects = ["The teacher", "A clerk", "The neighbours", "Someone"]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.5:
                parts.append(
                    f"The {rng.choice(words)} family {rng.choice(rest)} and {rng.choice(rest)}."
                )
            else:
                parts.append(f"{rng.choice(subjects)} {rng.choice(rest)} again.")
        out.append(" ".join(parts))
    return out


@pytest.mark.parametrize("name", ["race", "religion"])
@pytest.mark.parametrize("per_class", [5, 1000])
def test_inlp_sentences_and_labels_equal_bias_bench(name, per_class):
    axis = get_axis(name)
    docs = axis_documents(axis)
    pairs = axis_fit_words(axis)
    assert binary_inlp(pairs) and not binary_inlp(load_fit_pairs())
    bias, neutral, labels = bias_bench_binary(docs, axis.tuples, per_class, seed=3)
    chosen = select_attribute_sentences(docs, pairs, per_class=per_class, min_per_class=1, seed=3)
    assert chosen.bias == bias and chosen.neutral == neutral
    assert chosen.labelled() == ([*bias, *neutral], labels)
    assert sum(chosen.named.values()) >= len(bias) > 0


def test_inlp_on_planted_attribute_features_removes_the_planted_direction():
    """Features of attribute sentences sit at +u, neutral ones at −u (bias-bench's
    classifiers have no intercept, so the classes straddle the origin): INLP's first
    classifier under bias-bench's labels finds u: the one direction it removes lies along u
    (the L2-regularised hinge loss tilts it off u a little, toward the noise)."""
    from cdsbias.methods.inlp_fit import inlp_projection

    rng = np.random.default_rng(0)
    d, n = 12, 200
    u = np.zeros(d)
    u[3] = 1.0
    x = 0.3 * rng.normal(size=(2 * n, d))
    x[:n] += u
    x[n:] -= u
    labels = np.array([1] * n + [0] * n)
    erasure = inlp_projection(x, labels, iterations=1, seed=0)
    assert erasure.dev_accuracy[0] > 0.9
    removed = np.eye(d) - erasure.projection
    assert erasure.rank_removed == 1 and np.linalg.norm(removed @ u) > 0.85


# ----------------------------------------------------------------------- LEACE, k classes
def test_leace_with_k_group_classes_equalises_every_class_mean(age_axis):
    rng = np.random.default_rng(1)
    d, n = 10, 150
    means = rng.normal(scale=2.0, size=(4, d))  # three groups and the neutral class
    x = np.concatenate([rng.normal(size=(n, d)) + mean for mean in means])
    labels = np.repeat([2, 1, 0, -1], n)  # group_labels: k − 1 … 0, neutral −1
    erasure = leace_eraser(x, labels)
    erased = erasure.apply(x)
    class_means = np.stack([erased[labels == c].mean(axis=0) for c in (2, 1, 0, -1)])
    np.testing.assert_allclose(class_means - class_means.mean(axis=0), 0.0, atol=1e-8)
    assert erasure.rank_removed == 3  # classes − 1
    # The fit's labels come from the axis's groups (bias-bench's gender labels for k = 2).
    chosen = select_inlp_sentences(
        axis_documents(age_axis, 120), axis_fit_words(age_axis), per_class=5, min_per_class=1
    )
    assert chosen.labels == {"young": 2, "middle": 1, "old": 0, "neutral": -1}
    assert set(chosen.counts()) == {"young", "middle", "old", "neutral"}


# -------------------------------------------------------------------------------- errors
def test_too_few_sentences_of_a_group_name_the_group_and_the_fix(age_axis):
    docs = ["The young family went to the market on monday and stayed there."] * 3 + [
        "The old family went to the market on monday and stayed there too.",
        "A clerk spoke with the nurse about it for an hour.",
    ]
    pairs = axis_fit_words(age_axis)
    with pytest.raises(CdsbiasError) as caught:  # LEACE's classes: one per group
        select_inlp_sentences(docs, pairs, per_class=10, min_per_class=2)
    message = str(caught.value)
    assert "1 young, 0 middle, 1 old, 1 neutral" in message
    assert "no sentence names middle alone (words such as adults, middle-aged)" in message
    assert "use a larger corpus" in message
    with pytest.raises(CdsbiasError) as caught:  # INLP's: attribute vs neutral
        select_attribute_sentences(docs, pairs, per_class=10, min_per_class=2)
    message = str(caught.value)
    assert "2 bias, 1 neutral" in message and "young 1, middle 0, old 1 (middle never)" in message
    assert "posthoc_min_sentences_per_class=1" in message
    with pytest.raises(CdsbiasError, match=r"None of the 2 word tuples .* \(young, middle, old\)"):
        select_counterfactual_sets(["A clerk spoke with the nurse about it."], pairs)


def test_a_gender_word_pair_file_on_another_axis_is_an_error():
    with pytest.raises(CdsbiasError, match=r"posthoc_word_pairs .* bias_axis is 'race'"):
        plan_from_values(
            {"posthoc_method": "inlp", "posthoc_word_pairs": "pronoun_pairs.json"},
            given={"bias_axis": "race"},
        )


def test_self_debias_reads_the_axis_prefix_and_a_user_axis_needs_one(age_axis):
    for name in ("gender", "race", "religion"):
        plan = plan_from_values({"self_debias": True}, given={"bias_axis": name})
        assert plan.posthoc.prefix == get_axis(name).self_debias_prefix
    assert plan_from_values({"self_debias": True}).posthoc.prefix == get_axis().self_debias_prefix
    with pytest.raises(CdsbiasError, match=r"axis 'age' .* has none; give one, e\.g\. "
                       r"self_debias_prefix="):  # fmt: skip
        plan_from_values({"self_debias": True}, given={"bias_axis": age_axis.source})
    given = plan_from_values(
        {"self_debias": True, "self_debias_prefix": "Be fair about age: "},
        given={"bias_axis": age_axis.source},
    )
    assert given.posthoc.prefix == "Be fair about age: "


def test_self_debias_on_a_prefixless_axis_keeps_the_earlier_run(
    earlier,  # noqa: F811
    becpro,
    base,
    age_axis,
    capsys,
):
    argv = overwrite(earlier, becpro, base, "self_debias=true", "posthoc_only=true",
                     f"bias_axis={age_axis.source}")  # fmt: skip
    assert_fails_and_keeps(argv, earlier, capsys, "has none; give one")


def test_context_debias_reads_one_attribute_class_per_group(age_axis):
    race = get_axis("race")
    classes = axis_attribute_words(race)
    assert len(classes) == 3 and set(classes[0]) == set(race.words(0))
    assert axis_attribute_words(age_axis) == [["teens", "young"], ["adults", "middle-aged"],
                                              ["elevated", "old"]]  # fmt: skip
    male, female = default_attribute_words()
    gender = get_axis("gender")
    assert set(male) == gender.words(0) and set(female) == gender.words(1) | {"hers"}
    plan = plan_from_values({"debias_loss": "context_debias"}, given={"bias_axis": "religion"})
    loss = plan.loss.build_loss()
    assert [set(words) for words in loss.attribute_words] == [
        set(words) for words in axis_attribute_words(get_axis("religion"))
    ]


def test_a_hooked_religion_fit_records_its_axis_and_reattaches(tmp_path, becpro, base):
    """LEACE on religion, applied by a hook: the record names the axis and its four classes
    (three groups and neutral), and loading the run folder re-attaches the map, as on
    gender (tests/test_posthoc_methods.py)."""
    from test_methods_contract import axis_run_keys
    from test_posthoc_methods import logits
    from tests_helpers import SMOKE, overrides
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from cdsbias.methods.erasure import AffineErasure
    from cdsbias.methods.head_fold import hook
    from cdsbias.runs.folder import RunFolder
    from cdsbias.scoring import load_masked_lm
    from cdsbias.train.config import load_recipe
    from cdsbias.train.run import run

    out = tmp_path / "run"
    given = overrides(out, becpro, "init_from_scratch=false", f"model_name_or_path={base}",
                      "posthoc_method=leace", "posthoc_apply=hook", "posthoc_only=true",
                      "posthoc_min_sentences_per_class=5",
                      *axis_run_keys("religion", tmp_path))  # fmt: skip
    run(load_recipe(SMOKE, [k for k in given if not k.startswith("occupation_sentences=")]))
    record = RunFolder(out).fit_record()
    religion = get_axis("religion")
    assert record["details"]["bias_axis"] == religion.record()
    assert set(record["sentences_per_class"]) == {*religion.groups, "neutral"}
    assert record["details"]["labels"] == {"jewish": 2, "christian": 1, "muslim": 0, "neutral": -1}
    assert 1 <= record["rank_removed"] <= 3
    tokenizer = AutoTokenizer.from_pretrained(base)
    loaded, _ = load_masked_lm(out, progress=False)
    hooked = AutoModelForMaskedLM.from_pretrained(base).eval()
    hook(hooked, AffineErasure.load(out))
    assert torch.equal(logits(loaded, tokenizer), logits(hooked, tokenizer))


def test_a_finished_run_whose_axis_file_moved_loads_with_a_warning(tmp_path) -> None:
    """A finished run's recipe names an attribute file that is gone: the plan still builds
    (its fit and prefix are recorded) and a warning names the fix; a recipe a user is
    writing (``given``) fails instead."""
    from cdsbias.errors import CdsbiasError
    from cdsbias.methods import plan_from_values

    values = {"posthoc_method": "leace", "bias_axis": str(tmp_path / "gone.tsv")}
    with pytest.warns(UserWarning, match="Put the attribute file back"):
        plan = plan_from_values(values)
    assert plan.posthoc is not None
    with pytest.raises(CdsbiasError, match="not found"):
        plan_from_values(values, given=values)
