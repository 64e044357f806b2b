"""n-ary CDA/CDS on race, religion and user axes (cdsbias.cds.axis_corpus): bias-bench's
procedure on a seeded stream, uniform draws, the k-1 cyclic renderings, determinism under
batching, sharding, order and streaming, the recipe keys, and gender left as it was."""

from __future__ import annotations

import random
from collections import Counter
from itertools import product
from pathlib import Path

import datasets
import pytest
from scipy.stats import chisquare
from test_cds_axes_bias_bench import BIAS_BENCH_TUPLES

from cdsbias.axes import get_axis
from cdsbias.cds import CounterfactualMapper
from cdsbias.cds.axis_corpus import (
    AxisCounterfactualMapper,
    cyclic_mappings,
    draw_mapping,
    is_gender,
)
from cdsbias.cds.document_seed import document_rng, text_key
from cdsbias.errors import CdsbiasError
from cdsbias.train.config import CDSConfig, DataConfig, load_recipe
from cdsbias.train.data import build_training_data, counterfactual_mapper
from cdsbias.train.streaming import build_streaming_data, load_stream
from cdsbias.train.wordpiece import train_wordpiece

SMOKE = Path(__file__).resolve().parents[1] / "recipes" / "smoke.yaml"
#: bias-bench's religion tuples (data/bias_attribute_words.json), all in religion.tsv.
BIAS_BENCH_RELIGION = BIAS_BENCH_TUPLES["religion"]
#: Lower-case whitespace-separated sentences (what bias-bench sees after an uncased
#: tokenizer's decode) whose axis words are used as bias-bench's tuples take them: the
#: text on which the outputs are identical up to proper words' capitals. Elsewhere cdsbias
#: departs, class by class: tests/test_cds_axes_bias_bench.py.
SENTENCES = [
    "the jewish community met the imam in the mosque",
    "many muslims read the quran every day",
    "nothing about religion here at all",
    "the priest and the rabbi talked about judaism and islam",
    "christians built a church near the synagogue",
    "a long day at work for everyone",
    "the muslims and the jews shared the bible and the torah",
    "the weather was fine on sunday",
]


def bias_bench_ternary(sentence: str, draw: random.Random) -> str | None:
    """bias-bench's ``ternary_counterfactual_augmentation`` for one sequence (its loop,
    ``experiments/run_mlm.py``), the draws taken from ``draw``; None when it drops it."""
    words = sentence.split()
    augmented_sentence = words[:]
    r1 = draw.choice([1, 2])
    r2 = draw.choice([0, 2])
    r3 = draw.choice([0, 1])
    augmented = False
    for position, word in enumerate(words):
        for augmentation_words in BIAS_BENCH_RELIGION:
            r1_word, r2_word, r3_word = augmentation_words
            if r1_word == word:
                augmented = True
                augmented_sentence[position] = augmentation_words[r1]
            if r2_word == word:
                augmented = True
                augmented_sentence[position] = augmentation_words[r2]
            if r3_word == word:
                augmented = True
                augmented_sentence[position] = augmentation_words[r3]
    return " ".join(augmented_sentence) if augmented else None


def documents(n: int) -> dict[str, list[str]]:
    return {
        "id": [f"d{i}" for i in range(n)],
        "text": [SENTENCES[i % 8] + f" {i}" for i in range(n)],
    }


# ------------------------------------------------------------------ bias-bench's procedure
def test_default_cda_follows_bias_bench_on_a_seeded_stream():
    batch = documents(40)
    out = AxisCounterfactualMapper("text", axis="religion", seed=3, id_column="id")(batch)
    rows = iter(zip(out["id"], out["text"], out["counterfactual"], out["groups"], strict=True))
    for key, text in zip(batch["id"], batch["text"], strict=True):
        # The same draws bias-bench takes, from the document's own generator.
        expected = bias_bench_ternary(text, document_rng(3, f"{key}\x00groups"))
        first = next(rows)
        assert first[:3] == (key, text, False)  # every document is kept, original first
        if expected is None:  # bias-bench drops it; here it stays, once, unchanged
            continue
        cf_key, cf_text, flag, groups = next(rows)
        # Equal but for case: proper words are capitalised here (rule 5), not by bias-bench.
        assert (cf_key, cf_text.lower(), flag) == (key, expected, True)
        assert all(source != target for source, target in groups.items())
    assert next(rows, None) is None


def test_each_substituted_word_is_its_tuple_word_at_the_drawn_group():
    axis = get_axis("religion")
    batch = documents(200)
    out = AxisCounterfactualMapper("text", axis=axis, seed=11, id_column="id")(batch)
    originals = dict(zip(batch["id"], batch["text"], strict=True))
    checked = 0
    for key, text, flag, groups in zip(
        out["id"], out["text"], out["counterfactual"], out["groups"], strict=True
    ):
        if not flag:
            continue
        for before, after in zip(originals[key].split(), text.lower().split(), strict=True):
            group = axis.group_of(before)
            if group is None:
                assert before == after
                continue
            target = axis.groups.index(groups[axis.groups[group]])
            tuples = [words for words in axis.tuples if words[group] == before]
            assert after in {words[target] for words in tuples}
            checked += 1
    assert checked > 300


def test_drawn_groups_are_uniform_over_the_other_groups():
    """Each of the 2^3 mappings (r1, r2, r3) is equally likely: chi-square over 6000 draws."""
    counts = Counter(
        tuple(draw_mapping(document_rng(0, f"doc{i}\x00groups"), 3)) for i in range(6000)
    )
    expected = [tuple(m) for m in product([1, 2], [0, 2], [0, 1])]
    assert set(counts) == set(expected)  # never a group to itself
    assert chisquare([counts[m] for m in expected]).pvalue > 0.001
    mapper = AxisCounterfactualMapper("text", axis="religion", seed=0)
    drawn = Counter(tuple(mapper.mappings(text_key(f"t{i}"))[0]) for i in range(6000))
    assert chisquare([drawn[m] for m in expected]).pvalue > 0.001


def test_all_gives_exactly_the_k_minus_1_cyclic_renderings():
    assert cyclic_mappings(3) == [[1, 2, 0], [2, 0, 1]]
    assert cyclic_mappings(4) == [[1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
    batch = {"text": ["A Muslim woman met a Jewish man in the church.", "No axis word here."]}
    mapper = AxisCounterfactualMapper("text", axis="religion", counterfactuals="all")
    out = mapper(batch)
    assert out["text"] == [
        "A Muslim woman met a Jewish man in the church.",
        "A Jewish woman met a Christian man in the mosque.",
        "A Christian woman met a Muslim man in the synagogue.",
        "No axis word here.",
    ]
    assert out["counterfactual"] == [False, True, True, False]
    assert out["groups"][1] == {"jewish": "christian", "christian": "muslim", "muslim": "jewish"}
    assert mapper(batch) == out  # deterministic, no seed involved
    cds = AxisCounterfactualMapper("text", axis="religion", mode="cds", probability=1.0,
                                   counterfactuals="all")(batch)  # fmt: skip
    assert cds["text"] == out["text"][1:]  # replaced by its renderings


def test_cds_mode_replaces_documents_by_their_seeded_coin():
    batch = documents(400)
    out = AxisCounterfactualMapper(
        "text", axis="religion", mode="cds", probability=0.5, seed=2, id_column="id"
    )(batch)
    assert len(out["text"]) == 400 and out["id"] == batch["id"]
    with_words = [i for i, t in enumerate(batch["text"]) if "religion here" not in t
                  and "long day" not in t and "weather" not in t]  # fmt: skip
    changed = sum(out["counterfactual"][i] for i in with_words)
    assert 0.4 < changed / len(with_words) < 0.6
    assert not any(out["counterfactual"][i] for i in set(range(400)) - set(with_words))


# ------------------------------------------------------------------ determinism
def test_batching_sharding_order_and_processes_do_not_matter(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    dataset = datasets.Dataset.from_dict(documents(60))
    mapper = AxisCounterfactualMapper("text", axis="religion", seed=5, id_column="id")

    def rows(ds):
        return sorted(zip(ds["id"], ds["text"], ds["counterfactual"], strict=True))

    whole = dataset.map(mapper, batched=True, batch_size=1000)
    assert rows(dataset.map(mapper, batched=True, batch_size=7)) == rows(whole)
    assert rows(dataset.map(mapper, batched=True, num_proc=2)) == rows(whole)
    assert rows(dataset.shuffle(seed=1).map(mapper, batched=True)) == rows(whole)
    shards = [dataset.shard(3, i).map(mapper, batched=True) for i in range(3)]
    assert sorted(r for shard in shards for r in rows(shard)) == rows(whole)


def test_streamed_equals_in_memory_training_data(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    texts = documents(30)["text"]
    files = tmp_path / "corpus"
    files.mkdir()
    for part in range(2):  # two shards of the stream
        (files / f"p{part}.txt").write_text("\n".join(texts[part::2]) + "\n", encoding="utf-8")
    tokenizer = train_wordpiece(texts, 300)
    cds = CDSConfig(cds_mode="cda")
    common = {"dataset": "text", "data_files": [str(files / "p*.txt")], "max_seq_length": 32}
    stream_data = DataConfig(streaming=True, heldout_documents=0, **common)
    streamed = build_streaming_data(
        stream_data, cds, tokenizer, seed=0, stream=load_stream(stream_data), axis="religion"
    )
    memory = build_training_data(
        DataConfig(heldout_fraction=0.0, **common), cds, tokenizer, seed=0, axis="religion"
    )
    assert [row["input_ids"] for row in streamed.train] == memory.train["input_ids"]
    assert memory.n_counterfactual == sum(bias_bench_ternary(t, random.Random()) is not None
                                          for t in texts)  # fmt: skip


# ------------------------------------------------------------------ recipes and gender
def test_recipe_bias_axis_reaches_the_mapper_and_defaults_to_cda(tmp_path):
    recipe = load_recipe(SMOKE, [f"output_dir={tmp_path}", "bias_axis=religion"])
    source_mode = load_recipe(SMOKE, [f"output_dir={tmp_path}"]).cds.cds_mode
    # smoke.yaml sets cds_mode, which is kept; a recipe without it gets cda.
    assert recipe.cds.cds_mode == source_mode
    bare = tmp_path / "bare.yaml"
    bare.write_text("init_from_scratch: true\nbias_axis: race\n", encoding="utf-8")
    recipe = load_recipe(bare, [f"output_dir={tmp_path}"])
    assert (recipe.cds.cds_mode, recipe.cds.cds_counterfactuals) == ("cda", "one")
    mapper = counterfactual_mapper(recipe.cds, ["id"], recipe.axis.bias_axis)
    assert isinstance(mapper, AxisCounterfactualMapper) and mapper.axis.name == "race"
    gender = counterfactual_mapper(CDSConfig(), ["id"])
    assert type(gender) is CounterfactualMapper


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["bias_axis=religion", "cds_language=de"], "has no 'religion' axis"),
        (["bias_axis=race", "cds_language=da"], "has no 'race' axis"),
        (["cds_counterfactuals=all"], "cds_counterfactuals applies to axes"),
        (["bias_axis=race", "cds_counterfactuals=every"], "cds_counterfactuals must be one of"),
        (["bias_axis=religion", "gender_forms=neutral"], "gender_forms shape gender CDS"),
        (["bias_axis=relgion"], "Did you mean 'religion'"),
    ],
)
def test_bad_axis_recipe_is_one_line(tmp_path, overrides, message):
    with pytest.raises(CdsbiasError, match=message) as error:
        load_recipe(SMOKE, [f"output_dir={tmp_path}", *overrides])
    assert "\n" not in str(error.value)


def test_a_user_axis_file_works_in_any_language(tmp_path):
    words = tmp_path / "age.tsv"
    words.write_text("young\told\nyoung\told\nyouth\telder\n", encoding="utf-8")
    recipe = load_recipe(SMOKE, [f"output_dir={tmp_path}", f"bias_axis={words}",
                                 "cds_language=de", "cds_mode=cda"])  # fmt: skip
    mapper = counterfactual_mapper(recipe.cds, [], recipe.axis.bias_axis)
    out = mapper({"text": ["Der Young-Club und die Youth."]})
    assert out["text"] == ["Der Young-Club und die Youth.", "Der Old-Club und die Elder."]
    assert not is_gender(str(words)) and is_gender("Gender")


def test_the_card_names_the_axis_and_cites_bias_bench():
    from cdsbias.cds.treatment import CorpusTreatment

    religion = CorpusTreatment({"cds_mode": "cda", "bias_axis": "religion"})
    assert religion.label == "CDA (religion)"
    assert "n-ary counterfactual data augmentation" in religion.card_text("GAP")
    assert "'religion' axis" in religion.card_text("GAP")
    assert religion.citations[0].startswith("Meade, N.")
    every = CorpusTreatment({"cds_mode": "cds", "bias_axis": "race", "cds_counterfactuals": "all"})
    assert every.label == "CDS p=0.5 (race, all groups)"
    gender = CorpusTreatment({"cds_mode": "cda", "bias_axis": "gender"})
    assert gender.card_text("GAP") == CorpusTreatment({"cds_mode": "cda"}).card_text("GAP")
    assert gender.label == "CDA"
