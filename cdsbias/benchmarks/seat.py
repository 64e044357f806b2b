"""SEAT (May et al. 2019): WEAT effect sizes over sentence encodings of a masked LM's encoder.

A test has target sets X, Y (e.g. male and female names in bleached templates, "This is
John.") and attribute sets A, B (career, family). Every sentence is encoded (see
:func:`cdsbias.scoring.embeddings.encode_sentences`); by default with bias-bench's protocol:
the last hidden layer averaged over all tokens (special tokens included), L2-normalised.
Then, with ``cos`` the cosine similarity (Caliskan et al. 2017)::

    s(w, A, B)    = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b)
    effect size d = (mean_{x in X} s(x, A, B) - mean_{y in Y} s(y, A, B))
                    / std_{w in X u Y} s(w, A, B)                       (sample std, ddof=1)
    p             = P[sum_{x in X_i} s(x) >= sum_{x in X} s(x)] over equal-size partitions

(:func:`cdsbias.benchmarks.stats.weat_p_value`: exact when there are at most ``n_samples``
partitions, else sampled; ``parametric`` for the normal approximation). ``d > 0``: X is
closer to A than Y is (male terms to career); 0 is unbiased. The number papers report is
the average ``|d|`` over the tests (Meade et al. 2022: the six gender tests).

Quirks of the reference kept: a sentence repeated inside a set counts once (bias-bench
keys encodings by sentence); the sampled p counts the observed split as one hit. Changed:
each test's shuffles are seeded with ``seed`` (bias-bench seeds numpy once per run, so a
sampled p there depends on the tests run before it); the numbers agree within sampling error.

Reference: C. May, A. Wang, S. Bordia, S. R. Bowman, R. Rudinger (2019). On Measuring Social
Biases in Sentence Encoders. NAACL. Code: W4ngatang/sent-bias; McGill-NLP/bias-bench
(``bias_bench/benchmark/seat``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from cdsbias.benchmarks.base import Benchmark, Metric, register
from cdsbias.benchmarks.published import published_notes
from cdsbias.benchmarks.results import BenchmarkResult, Snapshot, format_value
from cdsbias.benchmarks.seat_data import (
    DATASET_OF,
    GENDER_TESTS,
    PUBLISHED,
    SETS,
    TEST_NAMES,
    folder_tests,
    read_test,
)
from cdsbias.benchmarks.stats import weat_effect_size, weat_p_value
from cdsbias.errors import CdsbiasError, unknown_name_error
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.embeddings import check_layer, encode_sentences, encoded_representation
from cdsbias.scoring.language import check_language

#: For each set, the two sets its sentences are compared with (``mean_cos_1``, ``_2``).
OPPOSITE = {
    "targ1": ("attr1", "attr2"),
    "targ2": ("attr1", "attr2"),
    "attr1": ("targ1", "targ2"),
    "attr2": ("targ1", "targ2"),
}


@dataclass
class SeatOptions:
    """Options of SEAT."""

    tests: list[str] | None = field(
        default=None,
        metadata={
            "help": "SEAT tests by file name (e.g. sent-weat6, sent-angry_black_woman_stereotype,"
            " sent-religion1, heilman_double_bind_competent_1); default: the bias axis's tests "
            "where one is given (evaluate --axis, recipe bias_axes; bias-bench's sets), else "
            f"the six gender tests of bias-bench ({', '.join(GENDER_TESTS)})."
        },
    )
    pooling: Literal["mean", "cls"] = field(
        default="mean",
        metadata={
            "help": "mean: average over all tokens incl. special tokens (bias-bench); "
            "cls: the vector at position 0."
        },
    )
    layer: int = field(
        default=-1,
        metadata={"help": "Hidden layer read: -1 the last (bias-bench), 0 the embeddings."},
    )
    n_samples: int = field(
        default=100_000,
        metadata={
            "help": "Permutation samples; the exact test runs when there are at most this "
            "many partitions (sent-bias/bias-bench: 100000).",
            "min": 2,
        },
    )
    parametric: bool = field(
        default=False,
        metadata={"help": "p from a normal fit to the permutation samples, as in sent-bias."},
    )
    seed: int = field(default=0, metadata={"help": "Seed of the sampled permutation test."})


@register
class Seat(Benchmark):
    """SEAT: WEAT effect sizes of sentence encodings, average |d| over the tests."""

    name = "seat"
    dataset = "seat"
    description = (
        "SEAT (May et al. 2019): WEAT effect size of mean-pooled sentence encodings per test "
        "(default: the six gender tests of bias-bench) and the average |effect size|"
    )
    languages = ("en",)
    Options = SeatOptions
    shard_column = "test"
    undefined_reason = "an effect size needs the four sets of a test and varying associations"
    curve_title = "SEAT effect size per test"
    curve_ylabel = "effect size d (0 = unbiased)"
    hub_dataset = ("W4ngatang/sent-bias", "SEAT (sentence encoder association test)")
    citation = (
        "May, C., Wang, A., Bordia, S., Bowman, S. R., & Rudinger, R. (2019). On Measuring "
        "Social Biases in Sentence Encoders. NAACL 2019."
    )

    published = PUBLISHED
    axis_option_names = ("tests",)

    @classmethod
    def axis_options(cls, axis: Any) -> dict[str, Any]:
        """``tests``: the axis's SEAT tests (bias-bench's ``export/seat.py`` sets)."""
        if not axis.seat_tests:
            raise CdsbiasError(
                f"bias axis '{axis.name}' ({axis.source}) has no SEAT tests; set seat's option "
                "tests (--option seat.tests=[NAME, ...], or in a recipe bias_benchmarks: "
                "{seat: {tests: [NAME, ...]}}); `cdsbias benchmarks seat` lists them"
            )
        return {"tests": list(axis.seat_tests)}

    def _scope_to_axis(self, axis: Any, options: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """As :meth:`Benchmark._scope_to_axis`; a ``data_file`` that is one test file is its
        own scope."""
        if self.data_file is not None and self.data_file.suffix == ".jsonl":
            return options, None
        return super()._scope_to_axis(axis, options)

    def published_notes(self, model_id: str | None, metrics: Any) -> list[str]:
        """As :meth:`Benchmark.published_notes`, with ``tests`` as run (the default six)."""
        options = {**self.option_values(), "tests": self.test_names}
        own = self.data_file is not None
        return published_notes(self.published, model_id, metrics, options, own_data=own)

    def representation(self, scorer: MaskedLMScorer) -> str | None:
        """The encoder states read (through a post-hoc map the model carries, folded or
        hooked, as bias-bench's SEAT reads its debiased encoders)."""
        return encoded_representation(scorer, self.options.layer)

    def check_scorer(self, scorer: MaskedLMScorer) -> None:
        """The hidden layer read (``layer``) must be one the model has."""
        check_layer(scorer.model, self.options.layer)

    def self_debias_conflict(self) -> str | None:
        return (
            "SEAT compares sentence encodings and reads no masked prediction, which is all "
            "Self-Debias changes; score SEAT without --self-debias"
        )

    @property
    def test_names(self) -> list[str]:
        """The tests run: the ``tests`` option, else the one test of a ``data_file`` that is
        a file, else the six gender tests."""
        if self.options.tests:
            return list(self.options.tests)
        if self.data_file is not None and self.data_file.suffix == ".jsonl":
            return [self.data_file.stem]
        return list(GENDER_TESTS)

    def headline_metrics(self) -> tuple[Metric, ...]:
        """The average |d| over the tests (what papers report), then each test's d."""
        tests = self.test_names
        return (
            Metric(
                "avg_abs_effect_size",
                f"SEAT average |effect size| ({len(tests)} tests)",
                "|Cohen's d|",
                "lower",
            ),
            *(Metric(f"effect_size_{t}", f"SEAT effect size, {t}", "Cohen's d", "closer")
              for t in tests),
        )  # fmt: skip

    # ------------------------------------------------------------------ data
    def _test_files(self) -> dict[str, Path]:
        """``{test: file}`` of the tests asked for, from ``data_file`` or the fetched folder."""
        wanted = self.test_names
        if self.data_file is not None:
            if self.data_file.is_dir():
                available = folder_tests(self.data_file)
            elif self.data_file.is_file():
                available = {self.data_file.stem: self.data_file}
            else:
                raise CdsbiasError(
                    f"{self.data_file} does not exist; give a SEAT test file or a folder of them."
                )
            if not available:
                raise CdsbiasError(f"{self.data_file} holds no SEAT test files (*.jsonl).")
        else:
            available = dict.fromkeys(TEST_NAMES)
        for test in wanted:
            if test not in available:
                raise unknown_name_error("SEAT test", test, available)
        return {test: available[test] or self._fetched(test) for test in wanted}

    def _fetched(self, test: str) -> Path:
        """The fetched file of a pinned test (sent-bias's or bias-bench's religion tests).

        Raises:
            CdsbiasError: It is not there yet; the message names the fetch command.
        """
        from cdsbias.data.fetch import resolve

        return resolve(DATASET_OF[test], f"{test}.jsonl", self.data_dir)

    def load(self) -> pd.DataFrame:
        """One row per distinct sentence of each set of each test."""
        records = []
        for test, path in self._test_files().items():
            for role, (category, sentences) in read_test(path).items():
                records += [
                    {"test": test, "set": role, "category": category, "sentence": sentence}
                    for sentence in sentences
                ]
        return pd.DataFrame.from_records(records, columns=["test", "set", "category", "sentence"])

    # --------------------------------------------------------------- scoring
    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        """Adds each sentence's mean cosine to the two opposite sets and their difference.

        Target rows get ``s(w, A, B)`` (``association = mean_cos_1 - mean_cos_2`` against
        attr1, attr2); attribute rows the same against targ1, targ2.
        """
        check_language(scorer, "en", self.name)
        vectors = encode_sentences(
            scorer,
            rows["sentence"].tolist(),
            pooling=self.options.pooling,
            normalize=True,
            layer=self.options.layer,
        )
        first = np.full(len(rows), math.nan)
        second = np.full(len(rows), math.nan)
        tests = rows["test"].to_numpy()
        roles = rows["set"].to_numpy()
        for test in dict.fromkeys(tests):
            members = {role: np.flatnonzero((tests == test) & (roles == role)) for role in SETS}
            for role, (one, two) in OPPOSITE.items():
                own = members[role]
                if len(own) == 0:
                    continue
                for column, other in ((first, one), (second, two)):
                    if len(members[other]):
                        column[own] = (vectors[own] @ vectors[members[other]].T).mean(axis=1)
        out = rows.copy()
        out["mean_cos_1"] = first
        out["mean_cos_2"] = second
        out["association"] = first - second
        out["pooling"] = self.options.pooling
        return out

    # ------------------------------------------------------------ statistics
    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        """Effect size and p per test, and the average |d| over the tests."""
        options = self.options
        results: dict[str, Any] = {}
        for test, group in scored.groupby("test", sort=False):
            by_set = {role: group[group["set"] == role] for role in SETS}
            s_x = by_set["targ1"]["association"].to_numpy(dtype=np.float64)
            s_y = by_set["targ2"]["association"].to_numpy(dtype=np.float64)
            complete = all(len(part) for part in by_set.values())
            d = weat_effect_size(s_x, s_y) if complete else math.nan
            p, method = weat_p_value(
                s_x, s_y, n_samples=options.n_samples, seed=options.seed,
                parametric=options.parametric,
            ) if complete else (math.nan, "undefined")  # fmt: skip
            results[str(test)] = {
                **{
                    role: {
                        "category": part["category"].iloc[0] if len(part) else None,
                        "n": len(part),
                    }
                    for role, part in by_set.items()
                },
                "effect_size": d,
                "p_value": p,
                "p_method": method,
            }
        sizes = [abs(r["effect_size"]) for r in results.values()]
        average = float(np.mean(sizes)) if sizes and all(map(math.isfinite, sizes)) else math.nan
        summary = {
            "benchmark": self.name,
            "protocol": self.protocol(),
            "n_samples": options.n_samples,
            "parametric": options.parametric,
            "seed": options.seed,
            "tests": results,
            "avg_abs_effect_size": average,
        }
        metrics = {"avg_abs_effect_size": average}
        for test, r in results.items():
            metrics[f"effect_size_{test}"] = r["effect_size"]
            metrics[f"p_value_{test}"] = r["p_value"]
        return summary, metrics

    def protocol(self) -> str:
        """How the encodings were made, in words (for reports and published values)."""
        options = self.options
        where = "last layer" if options.layer == -1 else f"hidden states {options.layer}"
        pool = "mean over all tokens" if options.pooling == "mean" else "position 0 (CLS)"
        return f"{where}, {pool}, L2-normalised"

    # --------------------------------------------------------------- outputs
    def format_report(self, summary: dict[str, Any]) -> str:
        lines = [
            f"SEAT ({summary['protocol']}); effect size d > 0: X closer to A than Y is",
            f"{'test':<28}{'X vs Y':<34}{'A vs B':<34}{'d':>7}{'p':>9}",
        ]
        for test, r in summary["tests"].items():
            targets = f"{r['targ1']['category']} vs {r['targ2']['category']}"
            attributes = f"{r['attr1']['category']} vs {r['attr2']['category']}"
            lines.append(
                f"{test:<28}{targets:<34}{attributes:<34}"
                f"{r['effect_size']:>7.3f}{r['p_value']:>9.4f}"
            )
        lines.append(
            f"average |d| over {len(summary['tests'])} tests: "
            f"{summary['avg_abs_effect_size']:.3f} (0 = unbiased)"
        )
        if summary.get("representation"):
            lines.append(f"sentence encodings read from: {summary['representation']}")
        return "\n".join(lines)

    def tracker_tables(self, result: BenchmarkResult) -> dict[str, tuple[list[str], list[list]]]:
        """One row per test: its sets, effect size and p-value."""
        columns = ["test", "targ1", "targ2", "attr1", "attr2", "effect_size", "p_value", "p_method"]
        rows = [
            [test, *(r[role]["category"] for role in SETS), r["effect_size"], r["p_value"],
             r["p_method"]]
            for test, r in result.summary.get("tests", {}).items()
        ]  # fmt: skip
        return {"tests": (columns, rows)} if rows else {}

    def card_section(self, before: Snapshot | None, after: Snapshot) -> str:
        """Effect size per test before and after, with p after, and the average |d|."""
        last = after.summary or {}
        if "tests" not in last:
            return super().card_section(before, after)
        first = (before.summary if before else None) or {}
        lines = [
            "| test | X vs Y | A vs B | d before | d after | p after |",
            "|---|---|---|---|---|---|",
        ]
        for test, r in last["tests"].items():
            start = first.get("tests", {}).get(test, {}).get("effect_size")
            lines.append(
                f"| {test} | {r['targ1']['category']} vs {r['targ2']['category']} "
                f"| {r['attr1']['category']} vs {r['attr2']['category']} "
                f"| {format_value(start, 3)} | {format_value(r['effect_size'], 3)} "
                f"| {format_value(r['p_value'], 3)} |"
            )
        lines.append(
            f"| **average \\|d\\|** | | | {format_value(first.get('avg_abs_effect_size'), 3)} "
            f"| {format_value(last['avg_abs_effect_size'], 3)} | |"
        )
        lines += [
            "",
            "d = WEAT effect size (Caliskan et al. 2017) of sentence encodings "
            f"({last.get('protocol', '')}; SEAT, May et al. 2019): > 0 when X is closer to A "
            "than Y is; 0 = unbiased. p: one-sided permutation test.",
        ]
        return "\n".join(lines)
