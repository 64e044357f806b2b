"""SEAT: WEAT statistics on hand-built encodings, the benchmark against bias-bench's loop."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import ASSETS
from scipy import stats
from transformers import AutoModel, AutoTokenizer

from cdsbias.benchmarks import build_benchmark
from cdsbias.benchmarks import seat as seat_module
from cdsbias.benchmarks.stats import weat_effect_size, weat_p_value
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer

FIXTURE = ASSETS / "seat"


# ------------------------------------------------------------------ statistics by hand
def test_two_vs_two_effect_size_and_exact_p_by_hand():
    # s(X) = [3, 1], s(Y) = [0, 2]: d = (2 - 1) / sd([3, 1, 0, 2]) = 1 / sqrt(5/3).
    assert weat_effect_size([3, 1], [0, 2]) == pytest.approx(1 / math.sqrt(5 / 3), abs=1e-12)
    # The 6 halves of {3, 1, 0, 2} sum to 4, 3, 5, 1, 3, 2; two reach the observed 4.
    p, method = weat_p_value([3, 1], [0, 2], n_samples=100_000)
    assert (p, method) == (pytest.approx(2 / 6, abs=1e-15), "exact")
    # Swapping X and Y flips d; X = {0, 1} has the smallest half sum, so p = 6 / 6.
    assert weat_effect_size([0, 2], [3, 1]) == pytest.approx(-1 / math.sqrt(5 / 3))
    assert weat_p_value([0, 1], [3, 2], n_samples=100_000) == (1.0, "exact")


def test_exact_p_counts_every_partition():
    rng = np.random.default_rng(3)
    s_x, s_y = rng.normal(0.2, 1, 5), rng.normal(0, 1, 5)  # C(10, 5) = 252 partitions
    pooled = np.concatenate([s_x, s_y])
    hits = sum(
        pooled[list(half)].sum() >= s_x.sum() for half in itertools.combinations(range(10), 5)
    )
    p, method = weat_p_value(s_x, s_y, n_samples=252)
    assert method == "exact" and p * 252 == pytest.approx(hits, abs=1e-9)
    # One partition more than n_samples allows: sampled, with the observed split as one hit.
    p, method = weat_p_value(s_x, s_y, n_samples=251)
    assert method == "sampled" and (p * 251) == pytest.approx(round(p * 251))


def test_exact_and_sampled_p_agree_within_sampling_error():
    rng = np.random.default_rng(11)
    s_x, s_y = rng.normal(0.3, 1, 8), rng.normal(0, 1, 8)  # 12,870 partitions
    exact, method = weat_p_value(s_x, s_y, n_samples=100_000)
    assert method == "exact" and 0.05 < exact < 0.95
    sampled, method = weat_p_value(s_x, s_y, n_samples=4000, seed=5)
    assert method == "sampled"
    assert abs(sampled - exact) < 4 * math.sqrt(exact * (1 - exact) / 4000) + 1 / 4000
    # Seeded: the same seed, the same p.
    assert weat_p_value(s_x, s_y, n_samples=4000, seed=5)[0] == sampled


def test_parametric_p_is_the_normal_tail_of_the_permutation_distribution():
    rng = np.random.default_rng(2)
    s_x, s_y = rng.normal(0.5, 1, 8), rng.normal(0, 1, 8)
    pooled = np.concatenate([s_x, s_y])
    statistics = [
        pooled[list(h)].sum() - (pooled.sum() - pooled[list(h)].sum())
        for h in itertools.combinations(range(16), 8)
    ]
    expected = stats.norm.sf(s_x.sum() - s_y.sum(), np.mean(statistics), np.std(statistics))
    p, method = weat_p_value(s_x, s_y, n_samples=20_000, parametric=True)
    assert method == "parametric" and p == pytest.approx(expected, abs=0.01)


def test_undefined_statistics_are_nan():
    assert math.isnan(weat_effect_size([], [1.0]))
    assert math.isnan(weat_effect_size([1.0], [1.0]))
    assert weat_p_value([1.0, 2.0], [1.0], n_samples=10) == (pytest.approx(math.nan, nan_ok=True),
                                                             "undefined")  # fmt: skip


# ------------------------------------------------------------------ hand-built encodings
def test_benchmark_on_hand_built_encodings(monkeypatch):
    """Unit vectors at known angles: s(w) = cos(w, a) - cos(w, b) = w_1 - w_2."""
    roles = ["targ1", "targ1", "targ2", "targ2", "attr1", "attr2"]
    angles = [0, 60, 90, 30, 0, 90]
    rows = pd.DataFrame({"test": "hand", "set": roles, "category": roles,
                         "sentence": [f"sentence {i}." for i in range(6)]})  # fmt: skip
    vectors = np.array([[math.cos(math.radians(a)), math.sin(math.radians(a))] for a in angles])
    monkeypatch.setattr(seat_module, "encode_sentences", lambda *a, **k: vectors)
    monkeypatch.setattr(seat_module, "check_language", lambda *a, **k: None)
    bench = build_benchmark("seat", {"tests": ["hand"]})
    scored = bench.score(None, rows.reset_index(drop=True))
    s_x = [1.0, 0.5 - math.sqrt(3) / 2]
    s_y = [-1.0, math.sqrt(3) / 2 - 0.5]
    got = scored[scored["set"].isin(["targ1", "targ2"])]["association"].to_numpy()
    np.testing.assert_allclose(got, s_x + s_y, atol=1e-12)
    summary, metrics = bench.summarize(scored)
    pooled = np.array(s_x + s_y)
    d = (np.mean(s_x) - np.mean(s_y)) / math.sqrt(((pooled - pooled.mean()) ** 2).sum() / 3)
    assert metrics["effect_size_hand"] == pytest.approx(d, abs=1e-12)
    assert metrics["avg_abs_effect_size"] == pytest.approx(abs(d), abs=1e-12)
    # Halves of {1, -0.366, -1, 0.366} at or above sum(X) = 0.634: {1, -0.366}, {1, 0.366}.
    assert metrics["p_value_hand"] == pytest.approx(2 / 6)
    assert summary["tests"]["hand"]["p_method"] == "exact"


# ------------------------------------------------------------------ against bias-bench's loop
def bias_bench_seat(folder, test_file):
    """bias-bench's SEATRunner for one test, from its description: AutoModel, one sentence
    at a time, last layer mean over all tokens, L2-normalised; weat.run_test's formulas."""
    model = AutoModel.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    data = json.loads(test_file.read_text())
    encodings = {}
    with torch.no_grad():
        for key in ("targ1", "targ2", "attr1", "attr2"):
            rows = []
            for text in dict.fromkeys(data[key]["examples"]):
                out = model(**tokenizer(text, return_tensors="pt")).last_hidden_state
                vector = out.mean(dim=1).view(-1).numpy().astype(np.float64)
                rows.append(vector / np.linalg.norm(vector))
            encodings[key] = np.array(rows)

    def s(w):
        cos = lambda u, v: u @ v / math.sqrt((u @ u) * (v @ v))  # noqa: E731
        return (np.mean([cos(w, a) for a in encodings["attr1"]])
                - np.mean([cos(w, b) for b in encodings["attr2"]]))  # fmt: skip

    s_x = np.array([s(w) for w in encodings["targ1"]])
    s_y = np.array([s(w) for w in encodings["targ2"]])
    pooled = np.concatenate([s_x, s_y])
    d = (s_x.mean() - s_y.mean()) / pooled.std(ddof=1)
    halves = itertools.combinations(range(len(pooled)), len(s_x))
    sums = [pooled[list(h)].sum() for h in halves]
    return d, np.mean(np.array(sums) >= s_x.sum() - 1e-12), s_x, s_y


def test_seat_equals_the_one_sentence_reference(real_vocab_bert):
    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert), batch_size=4)
    bench = build_benchmark(
        "seat", {"data_file": FIXTURE, "tests": ["mini-career", "mini-science"]}
    )
    result = bench.evaluate(scorer)
    sizes = []
    for test in ("mini-career", "mini-science"):
        d, p, s_x, s_y = bias_bench_seat(real_vocab_bert, FIXTURE / f"{test}.jsonl")
        rows = result.rows[result.rows["test"] == test]
        np.testing.assert_allclose(rows[rows["set"] == "targ1"]["association"], s_x, atol=1e-6)
        np.testing.assert_allclose(rows[rows["set"] == "targ2"]["association"], s_y, atol=1e-6)
        assert result.metrics[f"effect_size_{test}"] == pytest.approx(d, abs=1e-5)
        assert result.metrics[f"p_value_{test}"] == pytest.approx(p)
        sizes.append(abs(d))
    assert result.metrics["avg_abs_effect_size"] == pytest.approx(np.mean(sizes), abs=1e-5)
    # Sentences shared by the two tests (MaleTerms, FemaleTerms) were encoded once.
    assert scorer.sequences_run == result.rows["sentence"].nunique()
    assert "average |d| over 2 tests" in result.report


def test_cls_pooling_changes_the_encodings(real_vocab_bert):
    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert), batch_size=8)
    spec = {"data_file": FIXTURE / "mini-career.jsonl"}
    mean = build_benchmark("seat", spec).evaluate(scorer)
    cls = build_benchmark("seat", {**spec, "pooling": "cls"}).evaluate(scorer)
    assert mean.summary["protocol"] == "last layer, mean over all tokens, L2-normalised"
    assert cls.summary["protocol"] == "last layer, position 0 (CLS), L2-normalised"
    assert not np.allclose(mean.rows["association"], cls.rows["association"])


# ------------------------------------------------------------------ data and bad input
def test_unknown_test_suggests_the_nearest_name():
    with pytest.raises(CdsbiasError, match=r"Unknown SEAT test 'sent-weat66'.*sent-weat6"):
        build_benchmark("seat", {"tests": ["sent-weat66"]}).load()
    with pytest.raises(CdsbiasError, match=r"Unknown SEAT test 'mini-carer'.*mini-career"):
        build_benchmark("seat", {"data_file": FIXTURE, "tests": ["mini-carer"]}).load()


def test_a_test_file_missing_a_set_is_one_clear_error(tmp_path):
    data = json.loads((FIXTURE / "mini-career.jsonl").read_text())
    del data["attr2"]
    (tmp_path / "broken.jsonl").write_text(json.dumps(data))
    with pytest.raises(CdsbiasError, match=r"broken\.jsonl has no attr2 set; a test needs"):
        build_benchmark("seat", {"data_file": tmp_path / "broken.jsonl"}).load()
    data = json.loads((FIXTURE / "mini-career.jsonl").read_text())
    data["targ2"]["examples"].pop()
    (tmp_path / "unequal.jsonl").write_text(json.dumps(data))
    with pytest.raises(CdsbiasError, match="targ1 has 3 sentences and targ2 2"):
        build_benchmark("seat", {"data_file": tmp_path / "unequal.jsonl"}).load()
    (tmp_path / "not-json.jsonl").write_text("{targ1")
    with pytest.raises(CdsbiasError, match="is not a JSON object"):
        build_benchmark("seat", {"data_file": tmp_path / "not-json.jsonl"}).load()


def test_unfetched_default_data_says_how_to_fetch(tmp_path):
    with pytest.raises(CdsbiasError, match="cdsbias data fetch seat"):
        build_benchmark("seat", {"data_dir": tmp_path}).load()


def test_the_six_gender_tests_of_the_shared_data(shared_data):
    bench = build_benchmark("seat", {"data_dir": shared_data})
    counts = bench.rows.groupby(["test", "set"], sort=False).size()
    assert list(dict.fromkeys(bench.rows["test"])) == [
        "sent-weat6", "sent-weat6b", "sent-weat7", "sent-weat7b", "sent-weat8", "sent-weat8b",
    ]  # fmt: skip
    assert counts["sent-weat6"].to_dict() == {"targ1": 64, "targ2": 64, "attr1": 101, "attr2": 112}
    double_bind = build_benchmark(
        "seat", {"data_dir": shared_data, "tests": ["heilman_double_bind_competent_1"]}
    )
    assert set(double_bind.rows["category"]) >= {"Male", "Female"}


# ------------------------------------------------------------------ training callback
@pytest.mark.filterwarnings("ignore::cdsbias.scoring.language.LanguageMismatchWarning")
def test_the_callback_scores_seat_at_step_zero_and_a_checkpoint(tmp_path, becpro, base):
    from tests_helpers import fine_tune

    from cdsbias.runs.points import read_points

    spec = f"{{seat: {{data_file: {FIXTURE}, tests: [mini-career], n_samples: 1000}}}}"
    out = fine_tune(tmp_path / "run", becpro, base, "bias_eval_at_start=true",
                    f"bias_benchmarks={spec}")  # fmt: skip
    points = read_points(out)
    assert [p["step"] for p in points] == [0, 2]
    for point in points:
        metrics = point["benchmarks"]["seat"]["metrics"]
        assert math.isfinite(metrics["avg_abs_effect_size"])
        assert (out / "bias" / f"step-{point['step']}" / "seat" / "rows.tsv").is_file()
    assert points[0]["benchmarks"]["seat"]["metrics"] != points[1]["benchmarks"]["seat"]["metrics"]


def test_cli_unknown_test_is_one_line_with_the_nearest_name(tiny_bert, tmp_path, capsys):
    from cdsbias.cli import main

    code = main(["evaluate", str(tiny_bert), "-b", "seat", "--data", str(FIXTURE),
                 "--option", "tests=mini-carer", "--out", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: Unknown SEAT test 'mini-carer'")
    assert "mini-career" in err[-1]


def test_tracker_table_and_hub_results(real_vocab_bert):
    from cdsbias.benchmarks import Snapshot

    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert), batch_size=8)
    bench = build_benchmark("seat", {"data_file": FIXTURE, "tests": ["mini-career"]})
    result = bench.evaluate(scorer)
    columns, rows = bench.tracker_tables(result)["tests"]
    assert columns[:5] == ["test", "targ1", "targ2", "attr1", "attr2"]
    assert rows[0][:5] == ["mini-career", "MaleTerms", "FemaleTerms", "Career", "Family"]
    assert rows[0][5] == pytest.approx(result.metrics["effect_size_mini-career"])
    hub = bench.eval_results(Snapshot(3, result.metrics, result.summary), when="after")
    assert [e.metric_type for e in hub] == ["avg_abs_effect_size", "effect_size_mini-career"]
    card = bench.card_section(None, Snapshot(3, result.metrics, result.summary))
    assert "| mini-career | MaleTerms vs FemaleTerms | Career vs Family |" in card


# ------------------------------------------------------------ through a post-hoc map
def test_seat_of_a_folded_sentence_debias_model_reads_the_encoder_through_the_map(
    real_vocab_bert, tmp_path
):
    """bias-bench scores SEAT through its SentenceDebias hook. A folded map reaches only the
    MLM head, so SEAT reads the encoder through the saved map: the folded model's SEAT (in
    memory, and loaded from a run folder) equals the hooked model's row for row, differs
    from the base model's, and the summary says which states were read."""
    from transformers import AutoModelForMaskedLM

    from cdsbias.methods.erasure import sentence_debias_subspace
    from cdsbias.methods.head_fold import fold, hook
    from cdsbias.scoring.embeddings import encode_sentences

    tokenizer = AutoTokenizer.from_pretrained(real_vocab_bert)

    def model():
        return AutoModelForMaskedLM.from_pretrained(real_vocab_bert).eval()

    def seat(scored_model):
        spec = {"data_file": FIXTURE, "tests": ["mini-career", "mini-science"]}
        scorer = MaskedLMScorer(scored_model, tokenizer, batch_size=8)
        return build_benchmark("seat", spec).evaluate(scorer)

    base = MaskedLMScorer(model(), tokenizer, batch_size=8)
    male = ["he is a doctor .", "the man works here .", "his father is tall ."]
    female = ["she is a doctor .", "the woman works here .", "her mother is tall ."]
    erasure = sentence_debias_subspace(
        encode_sentences(base, male, normalize=True), encode_sentences(base, female, normalize=True)
    )
    erasure.details["posthoc_apply"] = "fold"
    plain = seat(model())
    hooked_model = model()
    hook(hooked_model, erasure)
    hooked = seat(hooked_model)
    folded_model = fold(model(), erasure)
    folded = seat(folded_model)
    assert plain.summary["representation"] == "encoder"
    assert hooked.summary["representation"] == "encoder through the SentenceDebias map (hook)"
    assert folded.summary["representation"] == "encoder through the SentenceDebias map (fold)"
    assert "sentence encodings read from: encoder through the SentenceDebias map (fold)" in (
        folded.report
    )
    assert folded.rows["association"].tolist() == hooked.rows["association"].tolist()
    assert folded.metrics == hooked.metrics
    assert folded.metrics["avg_abs_effect_size"] != plain.metrics["avg_abs_effect_size"]
    # The map is on for the encoding only: the folded model's encoder is unchanged after it.
    with torch.no_grad():
        batch = tokenizer(["he is a doctor ."], return_tensors="pt")
        states = folded_model.base_model(**batch).last_hidden_state
        expected = model().base_model(**batch).last_hidden_state
    assert torch.equal(states, expected)
    # A run folder of the folded model: loading it records the map, so SEAT reads the same.
    run = tmp_path / "run"
    folded_model.save_pretrained(run)
    tokenizer.save_pretrained(run)
    erasure.save(run)
    loaded = MaskedLMScorer.from_pretrained(str(run), batch_size=8)
    again = build_benchmark(
        "seat", {"data_file": FIXTURE, "tests": ["mini-career", "mini-science"]}
    )
    reread = again.evaluate(loaded)
    assert reread.rows["association"].tolist() == hooked.rows["association"].tolist()
    assert reread.summary["representation"] == folded.summary["representation"]
    # Another layer than the last: the map (on the last hidden state only) does not reach it.
    layer = build_benchmark("seat", {"data_file": FIXTURE / "mini-career.jsonl", "layer": 1})
    assert layer.evaluate(MaskedLMScorer(folded_model, tokenizer)).summary["representation"] == (
        "encoder, hidden states 1 (the SentenceDebias map acts on the last hidden state only)"
    )
