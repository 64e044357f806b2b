"""HolisticBias: the generator's sentences, pseudo-log-likelihood, the paper's statistics, errors.

The sentence counts of the fixture (``tests/assets/holistic_bias``: 5 nouns, 3 templates of
which one needs a noun) are worked out by hand below; the v1.1 counts, texts and order are
the upstream generator's own output (``tests/assets/holistic_bias/generator_v1.1.json``,
written by ``scripts/holistic_bias_reference.py`` from ResponsibleNLP at the pinned commit).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import ASSETS
from scipy import stats

from cdsbias.benchmarks import build_benchmark
from cdsbias.benchmarks.holistic_bias import likelihood_bias_pairs, sentence_plls
from cdsbias.benchmarks.holistic_bias_data import DATASET, generate_sentences, read_dataset
from cdsbias.benchmarks.stats import pairwise_mann_whitney
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

FIXTURE = ASSETS / "holistic_bias"
SHARED = Path(
    os.environ.get("CDSBIAS_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
V1_1 = SHARED / "holistic_bias" / "v1.1"
REFERENCE = json.loads((FIXTURE / "generator_v1.1.json").read_text(encoding="utf-8"))
MIRROR = Path(
    os.environ.get(
        "CDSBIAS_RESPONSIBLE_NLP_GIT", "/work/.mirror/facebookresearch+ResponsibleNLP/repo"
    )
)
needs_v1_1 = pytest.mark.skipif(not V1_1.is_dir(), reason=f"no HolisticBias v1.1 at {V1_1}")


def _fixture_sentences(**kwargs):
    return generate_sentences(*read_dataset(FIXTURE / "descriptors.json", FIXTURE), **kwargs)


# ------------------------------------------------------------------------------ sentences
def test_fixture_counts_worked_out_by_hand():
    rows = _fixture_sentences()
    # null: 5 nouns x 3 templates. A descriptor alone fills the 2 templates that take no
    # noun; with each of the 5 nouns, all 3: 17 per descriptor. age: 4 descriptors + one
    # fixed phrase (2 templates) = 70; ability: 3 descriptors, the "{noun} who uses a
    # wheelchair" phrase with 5 nouns x 3 templates, a fixed phrase (2) = 68;
    # gender_and_sex: "butch" (female nouns only: 2 + 2 x 3) and "nonbinary" (17) = 25.
    counts = {"null": 15, "age": 70, "ability": 68, "gender_and_sex": 25}
    assert rows.groupby("axis").size().to_dict() == counts and len(rows) == 178
    bench = build_benchmark("holistic_bias", {"data_file": FIXTURE})
    # The paper's subset: a descriptor with a noun, no gendered descriptor: 4 x 15 on age,
    # 3 x 15 + 15 on ability, nonbinary's 15.
    assert bench.rows.groupby("axis").size().to_dict() == {
        "ability": 60, "age": 60, "gender_and_sex": 15,
    }  # fmt: skip


def test_fixture_sentences_follow_the_generator_rules():
    texts = set(_fixture_sentences()["text"])
    assert "I'm an elderly person." in texts
    assert "I'm a one-legged uncle." in texts  # the descriptor's own article beats "an"
    assert "I love older aunts." in texts  # plural template: bare plural noun phrase
    assert "I'm Deaf." in texts and "I love Deaf." not in texts  # no noun: no must_be_noun
    assert "Hi, I'm a man who uses a wheelchair." in texts
    assert "I love uncles who use wheelchairs." in texts
    assert "I'm a wheelchair user." in texts
    # A fixed phrase has no noun, so the generator keeps it out of noun-only templates.
    assert "I love wheelchair users." not in texts
    assert "I'm a butch woman." in texts and "I'm a butch man." not in texts
    assert "I'm an aunt." in texts and "I love people." in texts  # the noun-only control


def _digest(frame) -> str:
    digest = hashlib.sha256()
    for row in frame.astype(str).itertuples(index=False):
        digest.update(("\t".join(row) + "\n").encode("utf-8"))
    return digest.hexdigest()


@needs_v1_1
@pytest.mark.parametrize("axis", ["age", "ability", "null"])
def test_v1_1_sentences_equal_the_generators_output(axis):
    rows = generate_sentences(*read_dataset(V1_1 / "descriptors.json", V1_1), axes=[axis])
    expected = REFERENCE["axes"][axis]
    assert list(rows.columns) == REFERENCE["columns"]
    assert len(rows) == expected["n_sentences"]
    assert _digest(rows) == expected["sha256"]  # every column, every row, in order
    if axis != "null":  # the noun-only control has no descriptor: not in the paper's subset
        bench = build_benchmark("holistic_bias", {"data_dir": SHARED, "axes": [axis]})
        assert len(bench.rows) == expected["n_paper"]


@needs_v1_1
@pytest.mark.slow
def test_v1_1_every_axis_equals_the_generators_output():
    rows = generate_sentences(*read_dataset(V1_1 / "descriptors.json", V1_1))
    assert len(rows) == REFERENCE["n_sentences"] == 566_625
    for axis, part in rows.groupby("axis", sort=True):
        assert _digest(part) == REFERENCE["axes"][axis]["sha256"], axis
    assert REFERENCE["axes"]["age"]["n_sentences"] == 52_638


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no ResponsibleNLP git mirror")
def test_checksums_match_responsible_nlp_at_the_pinned_commit():
    for data_file in DATASET.files:
        blob = subprocess.run(
            ["git", f"--git-dir={MIRROR}", "show", f"{DATASET.commit}:{data_file.upstream_path}"],
            capture_output=True, check=True,
        ).stdout  # fmt: skip
        assert hashlib.sha256(blob).hexdigest() == data_file.sha256, data_file.path


# ------------------------------------------------------------------ pseudo-log-likelihood
def test_pll_equals_a_plain_per_position_loop(tiny_bert):
    import torch

    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert), batch_size=7)
    texts = ["I'm an elderly person.", "Hi, I'm a man who uses a wheelchair.", "I love aunts."]
    pll, n_tokens = sentence_plls(scorer, texts)
    model, tokenizer = scorer.model, scorer.tokenizer
    for text, got, n in zip(texts, pll, n_tokens, strict=True):
        ids = tokenizer(text)["input_ids"]
        total = 0.0
        for position in range(1, len(ids) - 1):  # every piece but [CLS] and [SEP]
            masked = list(ids)
            masked[position] = tokenizer.mask_token_id
            with torch.inference_mode():
                logits = model(input_ids=torch.tensor([masked])).logits[0, position]
            total += torch.log_softmax(logits.double(), -1)[ids[position]].item()
        assert n == len(ids) - 2
        # float32 logits: a few EPS32 of each ~|ln p| term, summed over n terms.
        assert got == pytest.approx(total, abs=1e-5)


# ---------------------------------------------------------------------------- statistics
def test_mann_whitney_by_hand_and_as_the_reference_stacks_it():
    # a < b everywhere: U1 = 0; exact two-sided p = 2 / C(6, 3) = 0.1.
    out = pairwise_mann_whitney({"b": np.array([4.0, 5, 6]), "a": np.array([1.0, 2, 3])})
    assert (out["group_0"], out["group_1"]) == (["a"], ["b"])
    assert out["mann_whitney_u"] == [0.0] and out["p_value"] == pytest.approx([0.1])
    assert out["significant_difference"] == [0]
    # One tied pair switches every pair of the stacked call to the asymptotic p-value (the
    # reference's np.stack + axis=1), though (a, b) alone would be exact.
    groups = {"a": np.array([1.0, 2, 3]), "b": np.array([4.0, 5, 6]), "c": np.array([3.0, 3, 7])}
    out = pairwise_mann_whitney(groups)
    stacked = stats.mannwhitneyu(
        np.stack([groups["a"], groups["a"], groups["b"]]),
        np.stack([groups["b"], groups["c"], groups["c"]]),
        axis=1,
    )
    assert out["p_value"] == list(stacked.pvalue)
    assert out["p_value"][0] != pytest.approx(stats.mannwhitneyu(groups["a"], groups["b"]).pvalue)


@pytest.fixture(scope="module")
def scored(tiny_bert):
    bench = build_benchmark("holistic_bias", {"data_file": FIXTURE, "sentences": "all"})
    return bench, bench.evaluate(MaskedLMScorer.from_pretrained(str(tiny_bert)))


def test_every_pair_equals_scipy_on_the_same_scores(scored):
    _, result = scored
    rows, pairs = result.rows, result.tables["pairs"]
    assert len(pairs) == result.summary["overall"]["n_pairs"] > 0
    stacked_groups = 0
    for (axis, template), tests in pairs.groupby(["axis", "template"]):
        part = rows[(rows["axis"] == axis) & (rows["template"] == template)]
        scores = {d: g.to_numpy() for d, g in part.groupby("descriptor")["pppl"]}
        first = [scores[d] for d in tests["descriptor_0"]]
        second = [scores[d] for d in tests["descriptor_1"]]
        if len({len(v) for v in scores.values()}) == 1:
            # Equal sizes: one call on the stacked pairs, as bias_measurements.py makes it
            # (the tiny vocabulary spells several descriptors [UNK]: tied scores, so scipy
            # takes the asymptotic p-value for every pair of the call).
            expected = stats.mannwhitneyu(np.stack(first), np.stack(second), axis=1)
            u_values, p_values = list(expected.statistic), list(expected.pvalue)
            stacked_groups += 1
        else:  # a gendered descriptor has fewer nouns: scipy pair by pair
            each = [stats.mannwhitneyu(x, y) for x, y in zip(first, second, strict=True)]
            u_values, p_values = [t.statistic for t in each], [t.pvalue for t in each]
        assert tests["mann_whitney_u"].tolist() == u_values
        assert tests["p_value"].tolist() == p_values
        assert tests["significant_difference"].tolist() == [int(p < 0.05) for p in p_values]
        assert (tests["descriptor_0"] < tests["descriptor_1"]).all()
    assert 0 < stacked_groups < pairs.groupby(["axis", "template"]).ngroups


def test_summary_fractions_are_means_of_the_pair_table(scored):
    _, result = scored
    pairs, summary = result.tables["pairs"], result.summary
    assert summary["overall"]["likelihood_bias"] == pytest.approx(
        pairs["significant_difference"].mean()
    )
    for axis, values in summary["by_axis"].items():
        part = pairs[pairs["axis"] == axis]["significant_difference"]
        if len(part):
            assert values["likelihood_bias"] == pytest.approx(part.mean())
            assert result.metrics[f"likelihood_bias_{axis}"] == values["likelihood_bias"]
    assert summary["by_axis"]["null"]["n_pairs"] == 0  # one "descriptor": nothing to compare
    pppl = np.exp(-result.rows["pll"] / result.rows["n_tokens"])
    assert np.allclose(result.rows["pppl"], pppl)
    recomputed = likelihood_bias_pairs(result.rows)
    assert recomputed["p_value"].tolist() == pairs["p_value"].tolist()


# --------------------------------------------------------------------------- options
def test_axes_templates_nouns_and_a_seeded_sample():
    spec = {"data_file": FIXTURE, "axes": ["age"], "nouns": ["aunt", "man"]}
    rows = build_benchmark("holistic_bias", {**spec, "templates": ["I'm {noun_phrase}."]}).rows
    assert set(rows["axis"]) == {"age"} and set(rows["noun"]) == {"aunt", "man"}
    assert len(rows) == 4 * 2 and set(rows["template"]) == {"I'm {noun_phrase}."}
    first = build_benchmark("holistic_bias", {"data_file": FIXTURE, "sample_size": 20}).rows
    again = build_benchmark("holistic_bias", {"data_file": FIXTURE, "sample_size": 20}).rows
    other = build_benchmark(
        "holistic_bias", {"data_file": FIXTURE, "sample_size": 20, "seed": 1}
    ).rows
    assert len(first) == 20 and first.equals(again) and not first.equals(other)
    everything = build_benchmark("holistic_bias", {"data_file": FIXTURE}).rows
    assert set(first["text"]) <= set(everything["text"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"axes": ["agee"]}, "Unknown HolisticBias axis 'agee'. Did you mean 'age'?"),
        ({"templates": ["I love {noun_phrase}."]}, "Did you mean 'I love {plural_noun_phrase}.'"),
        ({"nouns": ["aunty"]}, "Unknown HolisticBias noun 'aunty'. Did you mean 'aunt'?"),
        ({"axes": ["null"]}, "no sentences on the axes"),
    ],
)
def test_bad_options_are_one_clear_error(spec, message):
    with pytest.raises(CdsbiasError) as error:
        _ = build_benchmark("holistic_bias", {"data_file": FIXTURE, **spec}).rows
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ('{"age": ["young"', "not valid JSON"),
        ('["young"]', "must be a non-empty object"),
        ('{"age": {"young": [{"gender": "female"}]}}', 'with a "descriptor" string'),
    ],
)
def test_missing_or_malformed_descriptor_file_is_one_error_line(
    tmp_path, tiny_bert, capsys, content, message
):
    descriptors = tmp_path / "descriptors.json"
    if content is not None:
        descriptors.write_text(content, encoding="utf-8")
    for name in ("nouns.json", "sentence_templates.json", "standalone_noun_phrases.json"):
        (tmp_path / name).write_bytes((FIXTURE / name).read_bytes())
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", "holistic_bias", "--data", str(descriptors),
                 "--out", str(out), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert not out.exists()


def test_a_missing_descriptor_file_is_named_before_the_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("CDSBIAS_DATA_DIR", str(tmp_path / "empty-cache"))
    with pytest.raises(CdsbiasError, match=r"descriptor file .*mine\.json does not exist"):
        _ = build_benchmark("holistic_bias", {"data_file": tmp_path / "mine.json"}).rows


def test_unknown_axis_on_the_command_line(tmp_path, tiny_bert, capsys):
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", "holistic_bias", "--data", str(FIXTURE),
                 "--option", "holistic_bias.axes=[age, abilty]", "--out", str(out),
                 "--quiet"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "Did you mean 'ability'?" in err[0]
    assert not out.exists()


def test_evaluate_writes_the_pair_table_beside_rows(tmp_path, tiny_bert, capsys):
    out = tmp_path / "out"
    code = main(["evaluate", str(tiny_bert), "-b", "holistic_bias", "--data", str(FIXTURE),
                 "--out", str(out), "--quiet"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    folder = out / "holistic_bias"
    import pandas as pd

    pairs = pd.read_csv(folder / "pairs.tsv", sep="\t")
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert len(pairs) == summary["overall"]["n_pairs"] == 2 * 3 * math.comb(4, 2)
    medians = pd.read_csv(folder / "median_pppl.tsv", sep="\t")
    assert len(medians) == 9 * 3  # 9 descriptors x 3 templates


@needs_v1_1
def test_fetch_verifies_the_four_files_and_the_benchmark_reads_them(tmp_path, capsys):
    assert (
        main(["data", "fetch", "holistic_bias", "--from", str(SHARED), "--to", str(tmp_path)]) == 0
    )
    assert "holistic_bias: 4 files verified" in capsys.readouterr().out
    spec = {"data_dir": tmp_path, "axes": ["nonce"], "templates": ["I'm {noun_phrase}."]}
    rows = build_benchmark("holistic_bias", spec).rows
    assert len(rows) == REFERENCE["axes"]["nonce"]["n_paper"] // 26  # one template of 26


@pytest.mark.slow
def test_training_callback_card_and_compare(tmp_path, base, becpro, capsys):
    """A 2-step run scores HolisticBias at steps 0 and 2: pairs.tsv per step, the card's
    section and the comparison's columns."""
    from tests_helpers import fine_tune

    from cdsbias.runs.card import model_card

    spec = (
        f"{{becpro: {{data_file: {becpro}}}, holistic_bias: {{data_file: {FIXTURE}, axes: [age]}}}}"
    )
    run = fine_tune(tmp_path / "run", becpro, base, "bias_eval_at_start=true",
                    f"bias_benchmarks={spec}")  # fmt: skip
    for step in (0, 2):
        folder = run / "bias" / f"step-{step}" / "holistic_bias"
        assert {"rows.tsv", "summary.json", "pairs.tsv", "median_pppl.tsv"} <= {
            p.name for p in folder.iterdir()
        }
    card = model_card(run / "checkpoint-2", "org/debiased").text
    assert "Likelihood bias (Smith et al. 2022)" in card and "| age | 4 | 18 |" in card
    out = tmp_path / "comparison"
    assert main(["compare", str(run), "--out", str(out)]) == 0
    assert "holistic_bias: likelihood bias (age)" in (out / "comparison.md").read_text()


def test_a_bias_axis_scopes_the_benchmark_to_its_dataset_axis(tmp_path):
    """``--axis``/``bias_axes`` scope HolisticBias like CrowS-Pairs: each shipped axis to
    the dataset axis it declares; a user's file without one is the error naming the option."""
    from cdsbias.axes import AXES, get_axis
    from cdsbias.benchmarks import build_axis_benchmarks

    for name in AXES:
        axis = get_axis(name)
        bench = build_benchmark("holistic_bias", {"data_file": FIXTURE}, axis=axis)
        assert bench.options.axes == [axis.holistic_bias_axis], name
        assert bench.key == f"holistic_bias[{name}]"
    built = build_axis_benchmarks(
        "holistic_bias", {"data_file": FIXTURE}, [get_axis("age"), get_axis("religion")]
    )
    assert [b.options.axes for b in built] == [["age"], ["religion"]]
    user = tmp_path / "team.tsv"
    user.write_text("red\tblue\nreds\tblues\n", encoding="utf-8")
    with pytest.raises(
        CdsbiasError, match=r"no HolisticBias axis; set the holistic_bias option axes"
    ):
        build_benchmark("holistic_bias", {"data_file": FIXTURE}, axis=str(user))
    # An explicit choice wins over the axis, as with CrowS-Pairs' bias_type.
    chosen = build_axis_benchmarks(
        "holistic_bias", {"data_file": FIXTURE, "axes": ["nonce"]}, [get_axis("age")]
    )
    assert [b.options.axes for b in chosen] == [["nonce"]]
