"""The axes of CrowS-Pairs' other categories (age, disability, sexual orientation,
nationality, physical appearance, socioeconomic status): their HolisticBias descriptors,
where CDS/CDA applies (age) and is refused (one error line naming what applies, nothing
written), and age's people-only rule on its development and held-out gold sets."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from conftest import SHARED_DATA

from cdsbias.axes import AXES, get_axis
from cdsbias.axes.holistic_bias import axis_descriptors, read_descriptors
from cdsbias.cds.axis_gold import read_axis_gold, score_axis_gold
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.methods import axis_methods, check_counterfactuals
from cdsbias.train.config import load_recipe

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.filterwarnings("ignore::cdsbias.scoring.language.LanguageMismatchWarning")
SMOKE = REPO / "recipes" / "smoke.yaml"
GOLD = Path(__file__).resolve().parent / "assets" / "cds"
HOLISTIC_BIAS = SHARED_DATA / "holistic_bias"
#: The axes CDS/CDA is refused on, and the one it applies to.
REFUSED = ("disability", "sexual_orientation", "nationality", "physical_appearance",
           "socioeconomic")  # fmt: skip
MAPPED = ("age", *REFUSED)
#: The nine axes of their own (a variant such as race@bias-bench is its base axis with
#: other word lists: the same categories).
NINE = sorted(name for name in AXES if get_axis(name).variant_of is None)
needs_holistic_bias = pytest.mark.skipif(
    not (HOLISTIC_BIAS / "v1.1" / "descriptors.json").is_file(),
    reason="the HolisticBias v1.1 copy is not in ../shared/data",
)


@pytest.fixture(autouse=True)
def _private_datasets_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


# ------------------------------------------------------------------ HolisticBias descriptors
@needs_holistic_bias
@pytest.mark.parametrize("name", sorted(AXES))
def test_each_axis_maps_to_holistic_bias_descriptors(name):
    axis = get_axis(name)
    found = axis_descriptors(axis, HOLISTIC_BIAS)
    assert list(found) == list(axis.groups)
    assert all(found[group] for group in axis.groups), found
    every = [d for group in axis.groups for d in found[group]]
    assert len(every) == len(set(every)), "a descriptor names two groups"
    # Every tuple word that is a HolisticBias descriptor of the axis names the same group
    # there as here.
    by_word = {d.lower(): group for group, ds in found.items() for d in ds}
    for group, words in enumerate(zip(*axis.tuples, strict=True)):
        for word in words:
            assert by_word.get(word, axis.groups[group]) == axis.groups[group], word


@needs_holistic_bias
def test_the_mapping_is_the_buckets_it_names():
    data = read_descriptors(HOLISTIC_BIAS)
    age = axis_descriptors(get_axis("age"), HOLISTIC_BIAS / "v1.1" / "descriptors.json")
    assert age["young"] == tuple(data["age"]["child"] + data["age"]["young"])
    assert age["old"] == tuple(data["age"]["old"])
    disability = axis_descriptors(get_axis("disability"), HOLISTIC_BIAS)
    assert disability["nondisabled"] == ("able-bodied", "nondisabled", "non-disabled",
                                         "neurotypical")  # fmt: skip
    assert "Deaf" in disability["disabled"] and "four-eyed" not in disability["disabled"]


def test_an_axis_without_a_mapping_says_so(tmp_path):
    user = tmp_path / "colours.tsv"
    user.write_text("warm\tcold\nred\tblue\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match="'colours' maps to no HolisticBias axis"):
        axis_descriptors(get_axis(str(user)), HOLISTIC_BIAS)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "HolisticBias descriptors not found"),
        ("{not json", "not valid JSON"),
        ('["age"]', 'expected HolisticBias\'s {"axis"'),
        ('{"age": ["young"]}', "axis 'age' is not an object of buckets"),
        ('{"age": {"child": "teen"}}', "age/child is not a list of descriptors"),
        ('{"age": {"child": [{"preference": "reviewed"}]}}', "is not a descriptor"),
        ('{"ability": {}}', "has no axis 'age'"),
        ('{"age": {"child": ["teen"], "young": []}}', "has no bucket 'old'"),
    ],
)
def test_a_bad_descriptors_file_is_one_line(tmp_path, content, message):
    if content is not None:
        (tmp_path / "descriptors.json").write_text(content, encoding="utf-8")
    with pytest.raises(CdsbiasError, match=message) as caught:
        axis_descriptors(get_axis("age"), tmp_path)
    assert "\n" not in str(caught.value)


def test_a_missing_descriptor_names_the_axis_and_group(tmp_path):
    data = {"ability": {"unspecific": ["disabled"], "auditory": []}}
    (tmp_path / "descriptors.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"no bucket 'intellectual_and_developmental'"):
        axis_descriptors(get_axis("disability"), tmp_path)


# ------------------------------------------------------------------ which methods apply
def test_cds_applies_to_age_only_among_these():
    assert get_axis("age").cds_refused is None
    for name in REFUSED:
        assert get_axis(name).cds_refused, name
    for name in ("gender", "race", "religion"):
        assert get_axis(name).cds_refused is None


@pytest.mark.parametrize("name", sorted(AXES))
def test_every_axis_has_the_post_hoc_methods_and_self_debias(name):
    titles = [t.split(" (")[0] for t in axis_methods(name)]
    assert {"SentenceDebias", "INLP", "LEACE", "Self-Debias"} <= set(titles)


@pytest.mark.parametrize("name", REFUSED)
def test_cds_refused_is_one_line_naming_the_axis_and_what_applies(name):
    with pytest.raises(CdsbiasError) as caught:
        check_counterfactuals(name)
    message = str(caught.value)
    assert "\n" not in message and f"bias axis '{name}' has no counterfactuals" in message
    assert get_axis(name).cds_refused in message
    for method in ("SentenceDebias", "INLP", "LEACE", "Self-Debias"):
        assert method in message


def test_cds_cli_refuses_and_writes_nothing(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("The disabled man and the blind woman waited.\n", encoding="utf-8")
    kept = tmp_path / "kept.jsonl"
    kept.write_text('{"text": "earlier"}\n', encoding="utf-8")
    fresh = tmp_path / "fresh.jsonl"
    for out in (kept, fresh):
        capsys.readouterr()
        code = main(["cds", str(source), "--axis", "disability", "--out", str(out), "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and err.startswith("error: "), err
        assert "bias axis 'disability' has no counterfactuals" in err and "INLP" in err
    assert kept.read_text(encoding="utf-8") == '{"text": "earlier"}\n'
    assert not fresh.exists() and not list(tmp_path.glob("*.report.json"))


def test_an_axis_typo_suggests_the_new_axes(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("An old man.\n", encoding="utf-8")
    for typo, meant in (("disabilty", "disability"), ("nationalty", "nationality"),
                        ("sexual_orientaton", "sexual_orientation")):  # fmt: skip
        code = main(["cds", str(source), "--axis", typo, "--out", str(tmp_path / "o.jsonl")])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and f"Did you mean '{meant}'" in err
    assert not (tmp_path / "o.jsonl").exists()
    # CrowS-Pairs' spelling of a category names the axis.
    assert get_axis("sexual-orientation").name == "sexual_orientation"


def test_a_recipe_on_a_refused_axis_trains_without_cds_or_is_refused(tmp_path):
    bare = tmp_path / "bare.yaml"
    bare.write_text("init_from_scratch: true\nbias_axis: disability\n", encoding="utf-8")
    assert load_recipe(bare, [f"output_dir={tmp_path}"]).cds.cds_mode == "none"
    # smoke.yaml asks for CDS: refused before anything is built.
    with pytest.raises(CdsbiasError, match="'socioeconomic' has no counterfactuals") as caught:
        load_recipe(SMOKE, [f"output_dir={tmp_path / 'run'}", "bias_axis=socioeconomic"])
    assert "\n" not in str(caught.value) and not (tmp_path / "run").exists()
    age = load_recipe(bare, [f"output_dir={tmp_path}", "bias_axis=age"])
    assert age.cds.cds_mode == "cda"


# ------------------------------------------------------------------ age CDS
def test_age_gold_sets():
    development = score_axis_gold(read_axis_gold(GOLD / "gold_en_age.tsv"))
    assert development["all"].exact == development["all"].sentences == 18
    assert development["unchanged"].sentences >= 5
    # Written before the development set was scored; 18 of 18 measured (docs/axes.md).
    held_out = score_axis_gold(read_axis_gold(GOLD / "gold_en_age_heldout.tsv"))
    assert (held_out["all"].exact, held_out["all"].sentences) == (18, 18)


def test_people_only_words_must_be_axis_words():
    from cdsbias.axes.base import BiasAxis

    with pytest.raises(CdsbiasError, match="people-only word"):
        BiasAxis("x", ("a", "b"), (("young", "old"),), people_only=frozenset({"aged"}))


# ------------------------------------------------------------------ CrowS-Pairs per axis
def test_crows_pairs_per_axis_equals_the_unscoped_rows_of_its_category(tiny_bert, tmp_path):
    """Scoring CrowS-Pairs on an axis gives the unscoped run's rows and numbers for the
    axis's category, on every axis that has rows in the data."""
    import numpy as np
    from test_bench_axes import axis_fixtures

    from cdsbias.benchmarks import build_benchmark, load_all
    from cdsbias.scoring import MaskedLMScorer

    load_all()
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert), batch_size=64, progress=False)
    data_file, _ = axis_fixtures(tmp_path)["crows_pairs"]
    whole = build_benchmark("crows_pairs", {"data_file": data_file}).evaluate(scorer)
    for name in MAPPED:
        category = get_axis(name).crows_pairs_category
        scoped = build_benchmark("crows_pairs", {"data_file": data_file}, axis=name)
        result = scoped.evaluate(scorer)
        expected = whole.rows[whole.rows["bias_type"] == category].reset_index(drop=True)
        assert len(result.rows) == len(expected) > 0
        for column in ("sent_more", "sent_less", "line", "neutral", "stereotype_preferred"):
            assert result.rows[column].tolist() == expected[column].tolist(), column
        # The same positions are scored; only the batch shapes differ, and float32 sums over
        # other shapes may differ in their last bits: eps32 per token of each summed score.
        for column, tokens in (("sent_more_score", "n_tokens_more"),
                               ("sent_less_score", "n_tokens_less")):  # fmt: skip
            bound = np.finfo(np.float32).eps * (expected[tokens] + 1) * expected[column].abs()
            assert ((result.rows[column] - expected[column]).abs() <= bound).all(), column
        assert result.summary["overall"] == whole.summary["by_bias_type"][category]
        assert result.metrics["metric_score"] == whole.metrics[f"metric_score_{category}"]


# ------------------------------------------------------------------ debias age, measure nine
@pytest.fixture(scope="module")
def age_run(tmp_path_factory, becpro, base) -> Path:
    """A tiny run that mitigates age (CDS p=1.0 on age) and measures every axis."""
    from test_bench_axes import axis_run_benchmarks
    from tests_helpers import fine_tune

    spec = axis_run_benchmarks(tmp_path_factory.mktemp("axis-data"), becpro)
    return fine_tune(tmp_path_factory.mktemp("age") / "run", becpro, base,
                     "bias_eval_at_start=true", f"bias_benchmarks={spec}", "bias_axis=age",
                     f"bias_axes=[{', '.join(NINE)}]")  # fmt: skip


def test_an_age_run_measures_all_nine_axes(age_run):
    from cdsbias.benchmarks.axis_scope import axis_key
    from cdsbias.runs.card import model_card
    from cdsbias.runs.compare import compare
    from cdsbias.runs.points import read_points

    # CrowS-Pairs has a category per axis; SEAT tests exist for four, StereoSet for three.
    expected = {"becpro"} | {axis_key("crows_pairs", axis) for axis in NINE}
    expected |= {axis_key("seat", a) for a in ("gender", "race", "religion", "age")}
    expected |= {axis_key("stereoset", a) for a in ("gender", "race", "religion")}
    for point in read_points(age_run):
        assert set(point["benchmarks"]) == expected
        for axis in MAPPED:
            entry = point["benchmarks"][axis_key("crows_pairs", axis)]
            assert entry["options"]["bias_type"] == get_axis(axis).crows_pairs_category
    table = compare([age_run])
    header = "| run | method | debiased for | " + " | ".join(NINE) + " |"
    assert "## Cross-axis matrix" in table and header in table
    card = str(model_card(age_run, "org/age"))
    assert "Debiased for: **age** (word lists: cdsbias)." in card
    assert f"Measured before and after training: {', '.join(NINE)}." in card
    for axis in MAPPED:
        assert f"{axis} bias" in card  # the hub results name the axis they measure


def test_evaluate_axis_takes_the_new_axes(tiny_bert, tmp_path):
    from test_bench_axes import axis_fixtures

    data = axis_fixtures(tmp_path / "data")
    for axis in ("age", "physical_appearance"):
        out = tmp_path / axis
        code = main(["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data",
                     str(data["crows_pairs"][0]), "--axis", axis, "--out", str(out),
                     "--quiet", "--self-debias"])  # fmt: skip
        assert code == 0
        folders = [p for p in out.iterdir() if p.is_dir()]
        summary = json.loads((folders[0] / "summary.json").read_text())
        assert summary["bias_type_filter"] == get_axis(axis).crows_pairs_category
        assert summary["self_debias"]["prefix"] == get_axis(axis).self_debias_prefix


# ------------------------------------------------------------------ published values
@pytest.mark.parametrize("name", sorted(AXES))
def test_nangia_bert_values_print_beside_each_axis(name):
    from cdsbias.benchmarks import build_benchmark, load_all
    from cdsbias.benchmarks.crows_pairs_data import NANGIA_BERT

    load_all()
    category = get_axis(name).crows_pairs_category
    scoped = build_benchmark("crows_pairs", {}, axis=name)
    lines = scoped.published_notes("bert-base-uncased", {"metric_score": 60.0})
    nangia = [line for line in lines if "Nangia et al. 2020" in line]
    assert nangia == [
        f"metric_score: measured 60; published: {NANGIA_BERT[category]:.1f} (Nangia et al. "
        f"2020 (EMNLP), Table 2, BERT, {category}; metric.py (pseudo-log-likelihood of the "
        f"unmodified tokens), {category} pairs)"
    ]
    # The same value beside the unscoped run's row of the category; another scoring is named.
    whole = build_benchmark("crows_pairs", {"scoring": "aul"})
    (line,) = [
        line
        for line in whole.published_notes("bert-base-uncased", {f"metric_score_{category}": 1.0})
        if "Nangia" in line
    ]
    assert "not like for like: scoring is 'aul' here, 'nangia' there" in line


@pytest.mark.parametrize(("benchmark", "axis", "option"),
                         [("seat", "disability", "tests"), ("stereoset", "age", "bias_type"),
                          ("stereoset", "nationality", "bias_type")])  # fmt: skip
def test_a_benchmark_without_the_axis_category_names_the_option(benchmark, axis, option):
    from cdsbias.benchmarks import build_benchmark, load_all

    load_all()
    with pytest.raises(CdsbiasError) as caught:
        build_benchmark(benchmark, {}, axis=axis)
    message = str(caught.value)
    assert "\n" not in message and f"'{axis}'" in message and option in message
