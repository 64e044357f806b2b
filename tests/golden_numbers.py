"""Golden numbers: what every benchmark and every training method computes today, locked.

Two parts, each a set of small files under ``tests/assets/golden/``:

* ``benchmarks/<model>/<benchmark>.json`` (the whole ``summary.json``) and
  ``<benchmark>.rows.tsv`` (ten rows of ``rows.tsv`` spread over the file, every column),
  from ``cdsbias evaluate`` run in-process on two tiny seeded models (WordPiece BERT and
  SentencePiece ALBERT) with the fixtures under ``tests/assets/``;
* ``training/<method>.json``: the ``bias_metrics.jsonl`` points (BEC-Pro at steps 0, 3, 6,
  held-out loss) of one 6-step smoke run per training method, on one CPU thread.

``scripts/golden.py`` recomputes them and prints the difference (``--write`` stores them);
``tests/test_golden.py`` fails with the same difference. Imports stay on public entry
points (the CLI, the benchmark registry, :func:`tiny_masked_lm`, ``tests_helpers``) so that
moving modules does not move this file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tiny_models import tiny_masked_lm

TESTS = Path(__file__).resolve().parent
ASSETS = TESTS / "assets"
GOLDEN = ASSETS / "golden"
REGENERATE = "python scripts/golden.py --write"

#: Floats may differ by this relative amount; everything else (ints, strings, which keys
#: exist, NaN) must be equal. On this machine, on one thread, every number is bit-identical
#: run to run and process to process; scoring is so at two threads too, but two threads
#: already move the training numbers by 1e-4 to 1e-3 relative (gradients summed in another order,
#: amplified in BEC-Pro's differences of log-probabilities), so training runs on one. The
#: 1e-6 leaves room for another CPU's BLAS kernels (AVX2 vs AVX-512, oneDNN vs OpenBLAS),
#: which order float32 sums differently and move the last of float32's ~7 digits.
REL_TOL = 1e-6

# ------------------------------------------------------------------------------ models
#: Danish pronouns added to the BERT vocabulary as whole words: ABC's GenDa Lens scoring
#: swaps one token for another, so it runs only where ``sin``/``hans``/``hendes`` are one.
DANISH = ("hun", "han", "hende", "ham", "hendes", "hans", "sin", "sit", "sine")
#: The models of :func:`build_models`.
MODELS = ("bert", "albert")


def build_models(root: Path) -> dict[str, Path]:
    """The two tiny seeded models every benchmark is locked on: name -> saved folder.

    ``bert``: WordPiece (the vocabulary :func:`tiny_masked_lm` trains, plus :data:`DANISH`);
    ``albert``: SentencePiece Unigram, as :func:`tiny_masked_lm` builds it.
    """
    plain = tiny_masked_lm("bert", root / "bert-plain")
    vocab = json.loads((plain / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    vocab_file = root / "bert-plain-vocab.txt"
    vocab_file.write_text("\n".join(sorted(vocab, key=vocab.__getitem__)) + "\n", "utf-8")
    return {
        "bert": tiny_masked_lm("bert", root / "bert", vocab_file=vocab_file, extra_tokens=DANISH),
        "albert": tiny_masked_lm("albert", root / "albert"),
    }


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


def same(stored: Any, now: Any) -> bool:
    """Equal, floats within :data:`REL_TOL` (relative), NaN equal to NaN."""
    if stored == now:
        return True
    a, b = _number(stored), _number(now)
    if a is None or b is None or (isinstance(stored, int) and isinstance(now, int)):
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


def differences(stored: dict[str, str], now: dict[str, str]) -> list[str]:
    """Readable lines ``file: key: stored X, now Y`` for everything that moved.

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
        for key in [*old, *(k for k in new if k not in old)]:
            if key not in new:
                lines.append(f"{path}: {key}: stored {old[key]!r}, now absent")
            elif key not in old:
                lines.append(f"{path}: {key}: not stored, now {new[key]!r}")
            elif not same(old[key], new[key]):
                lines.append(f"{path}: {key}: stored {old[key]!r}, now {new[key]!r}")
    return lines


def read_stored(paths: Iterable[str]) -> dict[str, str]:
    """The golden files among ``paths`` that exist: relative path -> text."""
    return {p: (GOLDEN / p).read_text(encoding="utf-8") for p in paths if (GOLDEN / p).exists()}


def stored_files(prefix: str) -> dict[str, str]:
    """Every golden file under ``prefix`` (``benchmarks/bert``, ``training``)."""
    folder = GOLDEN / prefix
    paths = [p.relative_to(GOLDEN).as_posix() for p in folder.rglob("*") if p.is_file()]
    return read_stored(sorted(paths))
