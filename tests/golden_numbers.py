"""Golden numbers: what every benchmark and every training method computes today, locked.

Two parts, each a set of small files under ``tests/assets/golden/``:

* ``benchmarks/<model>/<benchmark>.json`` (the whole ``summary.json``) and
  ``<benchmark>.rows.tsv`` (ten rows of ``rows.tsv`` spread over the file, every column),
  from ``cdsbias evaluate`` run in-process on two tiny seeded models (WordPiece BERT and
  SentencePiece ALBERT) with the fixtures under ``tests/assets/``;
* ``training/<method>.json``: the ``bias_metrics.jsonl`` points (BEC-Pro at steps 0, 3, 6,
  held-out loss) of one 6-step smoke run per training method, on one CPU thread.

``scripts/golden.py`` recomputes them and prints the difference (``--write`` stores them,
``--kernels`` measures how far other CPU kernels move them); ``tests/test_golden.py`` fails
with the same difference. Floats are compared to a tolerance derived from the magnitude of
the float32 terms they are made of (:func:`tolerance`), so the files hold on any CPU.
Imports stay on public entry points (the CLI, the benchmark registry,
:func:`tiny_masked_lm`, ``tests_helpers``) so that moving modules does not move this file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tiny_models import tiny_masked_lm

TESTS = Path(__file__).resolve().parent
ASSETS = TESTS / "assets"
GOLDEN = ASSETS / "golden"
REGENERATE = "python scripts/golden.py --write"

#: float32's machine epsilon: the models compute in float32, so each log-probability (or
#: cosine) a number is made of carries a rounding error of a few EPS32 times its magnitude,
#: and which few depends on the CPU's kernels (AVX-512 vs AVX2 vs SSE, MKL vs oneDNN vs
#: ATen order float32 sums differently).
EPS32 = 2.0**-23
#: The magnitude of the log-probabilities the golden models (:data:`INIT_RANGE`) assign to a
#: masked word: -log p stays under this for every word of the fixtures (measured: 32, the
#: least likely BEC-Pro target on ALBERT). A number made of such terms -- their differences,
#: means, quantiles -- is exact to a few EPS32 times this, however near zero it is;
#: sentence scores (sums of log-probabilities) are larger and bring their own scale in the
#: rows (see :func:`scale`).
LOGPROB_SCALE = 40.0
#: A float may move by ``K * EPS32 * scale`` (:func:`tolerance`). Measured on one CPU across
#: the kernel settings of ``scripts/golden.py --kernels`` (docs/architecture.md, "Golden
#: numbers"): benchmark numbers moved by at most 16 EPS32 * scale (ABC's relative scores
#: under ATen's scalar kernels with SSE MKL/oneDNN), training numbers by at most 0.7 -- six
#: Adam steps of a peaked model do not amplify rounding. K is eight (benchmarks) and 90
#: (training) times the largest move, and at most 1/65 of the 1e-3 * scale of a deliberate
#: change (K * EPS32 = 1e-3 at K = 8389).
K_BENCHMARK = 128
K_TRAINING = 64
#: Wilcoxon signed-rank statistics (BEC-Pro's, N = :data:`WILCOXON_N` pairs per test) rank
#: the |differences|; two of them within rounding of each other swap ranks from CPU to CPU
#: and the rank sum W moves by 1 per swap: z by 1 / sigma_W, r by 1 / (sigma_W sqrt(N)), a
#: p-value by 2 phi(z) / sigma_W. Measured: one swap (a training run under SSE kernels);
#: these may move by RANK_SWAPS swaps, their inputs (the associations) by the rounding.
RANK_SWAPS = 4
#: Pairs per Wilcoxon test of the golden BEC-Pro fixture (``small_becpro``: 90 per group).
WILCOXON_N = 90

# ------------------------------------------------------------------------------ models
#: Danish pronouns added to the BERT vocabulary as whole words: ABC's GenDa Lens scoring
#: swaps one token for another, so it runs only where ``sin``/``hans``/``hendes`` are one.
DANISH = ("hun", "han", "hende", "ham", "hendes", "hans", "sin", "sit", "sine")
#: The models of :func:`build_models`.
MODELS = ("bert", "albert")
#: Standard deviation of the golden models' random weights. At BERT's 0.02 a tiny model
#: predicts a nearly uniform distribution and every association is a difference of two
#: nearly equal log-probabilities (1e-4 of values of ~6), which float32 rounding moves by
#: 1e-3 of itself and whose ranks (Wilcoxon) and signs swap from CPU to CPU. At 0.3 the
#: predictions are peaked, associations and effects are O(1) and well apart, and a
#: rounding error stays a rounding error.
INIT_RANGE = 0.3


def build_models(root: Path) -> dict[str, Path]:
    """The two tiny seeded models every benchmark is locked on: name -> saved folder.

    ``bert``: WordPiece (the vocabulary :func:`tiny_masked_lm` trains, plus :data:`DANISH`);
    ``albert``: SentencePiece Unigram, as :func:`tiny_masked_lm` builds it; both with
    weights of standard deviation :data:`INIT_RANGE`.
    """
    plain = tiny_masked_lm("bert", root / "bert-plain")
    vocab = json.loads((plain / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    vocab_file = root / "bert-plain-vocab.txt"
    vocab_file.write_text("\n".join(sorted(vocab, key=vocab.__getitem__)) + "\n", "utf-8")
    peaked = {"initializer_range": INIT_RANGE}
    return {
        "bert": tiny_masked_lm(
            "bert", root / "bert", vocab_file=vocab_file, extra_tokens=DANISH, **peaked
        ),
        "albert": tiny_masked_lm("albert", root / "albert", **peaked),
    }


def build_training_base(root: Path) -> Path:
    """The tiny BERT every golden training run fine-tunes (peaked, as :data:`INIT_RANGE`)."""
    return tiny_masked_lm("bert", root / "training-base", initializer_range=INIT_RANGE)


# -------------------------------------------------------------------------- benchmarks
#: benchmark -> (data under tests/assets, options), as tests/test_benchmarks.py points them;
#: BEC-Pro's ``None`` is ``tests_helpers.small_becpro`` (two professions per group).
#: A new benchmark needs an entry here, then ``python scripts/golden.py --write``.
FIXTURES: dict[str, tuple[str | None, dict[str, Any]]] = {
    "becpro": (None, {"n_resamples": 50}),
    "kurita": ("kurita/attributes.tsv", {"permutations": 200}),
    "winobias": ("winobias", {}),
    "dawinobias": ("dawinobias", {}),
    "abc": ("abc", {"n_resamples": 50}),
    "crows_pairs": ("crows_pairs/crows_pairs_mini.csv", {}),
    "stereoset": ("stereoset/stereoset_mini.jsonl", {"n_resamples": 50}),
    "seat": ("seat", {"tests": "[mini-career, mini-science]", "n_samples": 1000}),
    "pronoun_fidelity": ("pronoun_fidelity", {}),
    "holistic_bias": ("holistic_bias", {}),
}
#: Options a model needs for a benchmark to run at all: ALBERT's pieces split ``sin``, so
#: ABC scores pseudo-log-likelihoods there (and GenDa Lens scoring on BERT).
MODEL_OPTIONS: dict[tuple[str, str], dict[str, Any]] = {("albert", "abc"): {"scoring": "pll"}}
#: Rows of rows.tsv kept: this many, evenly spaced from the first to the last.
SAMPLE_ROWS = 10


def benchmark_names() -> list[str]:
    """Every registered benchmark, sorted."""
    from cdsbias.benchmarks import REGISTRY, load_all

    load_all()
    return sorted(REGISTRY)


def benchmark_files(model: str, folder: Path, name: str, becpro: Path, work: Path) -> dict:
    """Golden files of benchmark ``name`` on ``model``: relative path -> text.

    Runs ``cdsbias evaluate`` in-process (scorer, benchmark and writer, as a user runs
    them). A benchmark that cannot run on the model is stored as its one-line error.
    """
    from cdsbias.cli import main as cli

    if name not in FIXTURES:
        raise KeyError(
            f"no golden fixture for benchmark '{name}': add it to FIXTURES in "
            f"tests/golden_numbers.py, then run `{REGENERATE}`"
        )
    data, options = FIXTURES[name]
    options = {**options, **MODEL_OPTIONS.get((model, name), {})}
    data_file = becpro if data is None else ASSETS / data
    out = work / "evaluate" / model
    argv = ["evaluate", str(folder), "-b", name, "--data", str(data_file), "--out", str(out),
            "--batch-size", "64", "--quiet"]  # fmt: skip
    for key, value in options.items():
        argv += ["--option", f"{name}.{key}={value}"]
    stderr = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        code = cli(argv)
    record: dict[str, Any] = {
        "benchmark": name,
        "model": model,
        "data": "tests_helpers.small_becpro()" if data is None else f"tests/assets/{data}",
        "options": options,
    }
    stem = f"benchmarks/{model}/{name}"
    if code != 0:
        errors = [line for line in stderr.getvalue().splitlines() if line.startswith("error:")]
        reason = errors[-1] if errors else f"exit code {code}"
        record["skipped"] = f"cannot run on this model: {reason}"
        return {f"{stem}.json": _dump(record)}
    summary = json.loads((out / name / "summary.json").read_text(encoding="utf-8"))
    summary["model"] = model  # the CLI records the (temporary) folder
    with open(out / name / "rows.tsv", encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle, delimiter="\t"))
    picks = sorted({round(i * (len(rows) - 1) / (SAMPLE_ROWS - 1)) for i in range(SAMPLE_ROWS)})
    picks = [i for i in picks if i < len(rows)]
    record["rows"] = len(rows)
    record["sampled_rows"] = picks
    record["summary"] = summary
    sample = io.StringIO()
    writer = csv.writer(sample, delimiter="\t", lineterminator="\n")
    writer.writerow(["row", *header])
    writer.writerows([i, *rows[i]] for i in picks)
    return {f"{stem}.json": _dump(record), f"{stem}.rows.tsv": sample.getvalue()}


# ---------------------------------------------------------------------------- training
#: Recipe keys of each training method (on top of the 6-step smoke run below).
METHODS: dict[str, list[str]] = {
    "full": [],
    "partial": ["trainable_parameters=[bert.encoder.layer.1.*, cls.predictions.transform.*]"],
    "lora": ["peft_method=lora", "lora_r=4"],
    "adapter": ["peft_method=adapter", "adapter_reduction_factor=4"],
    "dropout": ["hidden_dropout_prob=0.2", "attention_probs_dropout_prob=0.15"],
    "cda": ["cds_mode=cda"],
    # The smoke corpus names every person with a gendered noun: pronouns as the attribute
    # classes leave pronoun-free sentences as stereotype sentences (ContextDebias.example).
    "context_debias": [
        "debias_loss=context_debias",
        "context_debias_batch_size=4",
        "context_debias_max_sentences=16",
        "context_debias_attribute_words=[pronouns_male.txt, pronouns_female.txt]",
    ],
}
#: recipes/smoke.yaml fine-tuning the tiny BERT (``tests_helpers.fine_tune``): 6 steps,
#: BEC-Pro (``small_becpro``, 50 resamples) at step 0 and at the checkpoints 3 and 6.
SIX_STEPS = ["max_steps=6", "save_steps=3", "bias_eval_at_start=true"]


def training_files(method: str, base: Path, becpro: Path, work: Path) -> dict[str, str]:
    """The golden file of one 6-step run of ``method``: its ``bias_metrics.jsonl`` points.

    The caller runs torch on one thread (``torch.set_num_threads(1)``).
    """
    import warnings

    from tests_helpers import fine_tune

    keys = [*SIX_STEPS, *METHODS[method]]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        # The smoke recipe's from-scratch keys only warn when a saved model is fine-tuned.
        warnings.filterwarnings("ignore", "model_config, tokenizer_vocab_size only shape")
        run = fine_tune(work / "train" / method, becpro, base, *keys)
    lines = (run / "bias_metrics.jsonl").read_text(encoding="utf-8").splitlines()
    # bias_metrics.jsonl holds no wall-clock field (step, epoch, loss and benchmark
    # numbers only), so every value is compared.
    record = {"method": method, "recipe_keys": keys, "points": [json.loads(x) for x in lines]}
    return {f"training/{method}.json": _dump(record)}


# -------------------------------------------------------------------------- comparison
def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=1, ensure_ascii=False) + "\n"


def _flatten(value: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(v, f"{key}.{k}" if key else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _flatten(v, f"{key}[{i}]")
    else:
        yield key, value


def _cells(text: str) -> dict[str, str]:
    header, *rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    return {f"row {row[0]} {column}": cell for row in rows for column, cell in zip(header, row)}


def _values(path: str, text: str) -> dict[str, Any]:
    if path.endswith(".tsv"):
        return _cells(text)
    return dict(_flatten(json.loads(text)))


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def scale(path: str, stored: dict[str, str]) -> float:
    """The magnitude of the terms the numbers of golden file ``path`` are computed from.

    :data:`LOGPROB_SCALE`, or the largest float of the file's sampled rows where those are
    larger (a sentence's score is a sum of log-probabilities: ABC's, CrowS-Pairs'), since a
    summary number is a difference, mean or quantile of row numbers.
    """
    rows = stored.get(path.removesuffix(".json") + ".rows.tsv") if path.endswith(".json") else None
    rows = stored[path] if path.endswith(".rows.tsv") else rows
    cells = _cells(rows).values() if rows else ()
    floats = [abs(x) for x in map(_number, cells) if x is not None and math.isfinite(x)]
    return max([LOGPROB_SCALE, *floats])


def tolerance(path: str, scale_: float, value: Any, key: str = "") -> float:
    """How far ``value`` (at ``key``) of golden file ``path`` may move on a correct machine.

    ``K * EPS32`` times the file's ``scale_`` (:func:`scale`), or times ``|value|`` where
    that is larger (a rank sum, a percentage: its own scale). A log-ratio (a key with
    ``log2_ratio``, ABC's ``log2(median female / median male)``) is no difference of its
    terms but a quotient: moving ``f`` and ``m`` by ``d`` moves ``log2(f / m)`` by
    ``(d / |f| + d / |m|) / ln 2``, and with the larger median of O(1) (the golden models'
    relative scores) and the smaller ``2**-|r|`` times it, by ``d * (1 + 2**|r|) / ln 2``:
    a bootstrap resample whose male median is near zero (ABC on ALBERT: r = 9.7) is
    ill-conditioned on every CPU, and its inputs, the rows, are what is held tight.
    """
    k = K_TRAINING if path.startswith("training/") else K_BENCHMARK
    return k * rounding(scale_, value, key) + RANK_SWAPS * rank_swap(value, key)


def rank_swap(value: Any, key: str) -> float:
    """How far one swap of two adjacent ranks moves the Wilcoxon number ``value`` at ``key``
    (0 for anything else; :data:`RANK_SWAPS`)."""
    number = _number(value)
    if "wilcoxon" not in key or number is None or not math.isfinite(number):
        return 0.0
    n = WILCOXON_N
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)  # the rank sum's, without ties
    if key.endswith(".statistic"):
        return 1.0
    if key.endswith(".z"):
        return 1 / sigma
    if key.endswith(".r") or "wilcoxon_r_" in key:
        return 1 / (sigma * math.sqrt(n))
    if key.endswith((".p_value", ".p_holm")) or "wilcoxon_p" in key:
        z = statistics.NormalDist().inv_cdf(1 - min(max(number, 1e-300), 1.0) / 2)
        holm = 3 if key.endswith(".p_holm") else 1  # Holm multiplies by up to 3 groups
        return holm * 2 * statistics.NormalDist().pdf(z) / sigma
    return 0.0  # mean_difference, n: not rank statistics


def rounding(scale_: float, value: Any, key: str = "") -> float:
    """The unit of :func:`tolerance`: one EPS32 of the terms ``value`` is made of."""
    number = _number(value)
    size = abs(number) if number is not None and math.isfinite(number) else 0.0
    if "log2_ratio" in key:
        return EPS32 * scale_ * (1 + 2.0 ** min(size, 60.0)) / math.log(2)
    return EPS32 * max(scale_, size)


def same(stored: Any, now: Any, tol: float = 0.0) -> bool:
    """Equal; floats within ``tol`` (absolute, :func:`tolerance`), NaN equal to NaN.

    Everything else (ints such as counts, strings, None) must be equal.
    """
    if stored == now:
        return True
    a, b = _number(stored), _number(now)
    if a is None or b is None or (isinstance(stored, int) and isinstance(now, int)):
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol


def differences(stored: dict[str, str], now: dict[str, str]) -> list[str]:
    """Readable lines ``file: key: stored X, now Y (tolerance T)`` for everything that moved.

    Args:
        stored: Relative path -> text of the golden files (those that exist).
        now: Relative path -> text of the freshly computed ones.
    """
    lines = []
    for path in sorted(set(stored) | set(now)):
        if path not in now:
            lines.append(f"{path}: stored, but no longer computed")
            continue
        if path not in stored:
            lines.append(f"{path}: not stored yet (run `{REGENERATE}`)")
            continue
        old, new = _values(path, stored[path]), _values(path, now[path])
        size = scale(path, stored)
        for key in [*old, *(k for k in new if k not in old)]:
            if key not in new:
                lines.append(f"{path}: {key}: stored {old[key]!r}, now absent")
            elif key not in old:
                lines.append(f"{path}: {key}: not stored, now {new[key]!r}")
            elif not same(old[key], new[key], tol := tolerance(path, size, old[key], key)):
                line = f"{path}: {key}: stored {old[key]!r}, now {new[key]!r}"
                numeric = _number(old[key]) is not None and _number(new[key]) is not None
                lines.append(line + (f" (tolerance {tol:.2g})" if numeric else ""))
    return lines


def spread(stored: dict[str, str], now: dict[str, str]) -> dict[str, tuple[float, str]]:
    """How far the floats of each file moved, in units of :func:`rounding`: path -> (the
    largest such K, the key that moved most); Wilcoxon numbers under ``path + " (rank
    swaps)"``, in swaps (:func:`rank_swap`). The measure :data:`K_BENCHMARK`,
    :data:`K_TRAINING` and :data:`RANK_SWAPS` are set from (``scripts/golden.py
    --kernels``)."""
    moved: dict[str, tuple[float, str]] = {}
    for path in sorted(set(stored) & set(now)):
        old, new = _values(path, stored[path]), _values(path, now[path])
        size = scale(path, stored)
        worst = swaps = (0.0, "")
        for key in old.keys() & new.keys():
            a, b = _number(old[key]), _number(new[key])
            if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
                continue
            if rank_swap(a, key):
                swaps = max(swaps, (abs(a - b) / rank_swap(a, key), key))
            else:
                worst = max(worst, (abs(a - b) / rounding(size, a, key), key))
        moved[path] = worst
        if swaps[0]:
            moved[f"{path} (rank swaps)"] = swaps
    return moved


def read_stored(paths: Iterable[str]) -> dict[str, str]:
    """The golden files among ``paths`` that exist: relative path -> text."""
    return {p: (GOLDEN / p).read_text(encoding="utf-8") for p in paths if (GOLDEN / p).exists()}


def stored_files(prefix: str) -> dict[str, str]:
    """Every golden file under ``prefix`` (``benchmarks/bert``, ``training``)."""
    folder = GOLDEN / prefix
    paths = [p.relative_to(GOLDEN).as_posix() for p in folder.rglob("*") if p.is_file()]
    return read_stored(sorted(paths))
