"""Small builders shared by tests (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

from pathlib import Path


def save_bare_encoder(folder: Path, config_cls, model_cls) -> Path:
    """Saves an encoder *without* an MLM head plus a tokenizer, like a sentence-embedding model."""
    from conftest import WORDS
    from transformers import BertTokenizerFast

    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(tokens)})
    config = config_cls(
        vocab_size=len(tokens), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64,
    )  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    model_cls(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# ------------------------------------------------------------------ smoke runs of each method
SMOKE = Path(__file__).resolve().parents[1] / "recipes" / "smoke.yaml"
#: Recipe keys of a short smoke run per training method (on top of :func:`overrides`).
METHODS = {
    "lora": ["peft_method=lora", "max_steps=4", "lora_r=4", "hidden_dropout_prob=0.2",
             "attention_probs_dropout_prob=0.15"],
    "adapter": ["peft_method=adapter", "max_steps=4", "cds_mode=cda",
                "adapter_reduction_factor=4"],
    "partial": ["trainable_parameters=[bert.encoder.layer.1.*, cls.predictions.transform.*]",
                "max_steps=4"],
}  # fmt: skip


def small_becpro(folder: Path) -> Path:
    """Two professions per group of the packaged BEC-Pro (540 rows): fast to score."""
    from cdsbias.benchmarks.becpro_data import generate_english

    rows = generate_english()
    keep = rows.groupby("Prof_Gender")["Profession"].transform(
        lambda s: s.isin(s.drop_duplicates().head(2))
    )
    path = folder / "becpro_small.tsv"
    rows[keep].to_csv(path, sep="\t")
    return path


def overrides(out: Path, becpro: Path, *extra: str) -> list[str]:
    """Smoke-recipe keys of a 2-step run on generated sentences, scored on ``becpro``."""
    return [
        f"output_dir={out}", "dataset=occupations", "occupation_sentences=200",
        "max_documents=null",  # smoke.yaml's 120 would cut GAP, not this corpus: an error
        "max_steps=2", "save_steps=2", "bias_eval_at_start=false", "bias_n_resamples=50",
        f"bias_benchmarks={{becpro: {{data_file: {becpro}}}}}", *extra,
    ]  # fmt: skip


def fine_tune(out: Path, becpro: Path, base: Path, *extra: str) -> Path:
    """A smoke run that fine-tunes the saved model ``base`` (see :data:`METHODS`)."""
    from cdsbias.train.config import load_recipe
    from cdsbias.train.run import run

    recipe = load_recipe(SMOKE, overrides(out, becpro, "init_from_scratch=false",
                                          f"model_name_or_path={base}", *extra))  # fmt: skip
    return run(recipe)


# ------------------------------------------------------------------ resume after SIGKILL
def kill_after_checkpoint(argv: list[str], run_dir: Path, step: int, timeout: float = 300) -> None:
    """Runs ``train.py ARGV`` and SIGKILLs it as soon as ``checkpoint-STEP`` is complete.

    Its ``trainer_state.json`` is the last file the Trainer writes into a checkpoint.
    """
    import os
    import signal
    import subprocess
    import sys
    import time

    repo = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, str(repo / "train.py"), *argv],
        cwd=repo, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.time() + timeout
    while not (run_dir / f"checkpoint-{step}" / "trainer_state.json").exists():
        assert process.poll() is None, "the run ended before it could be killed"
        assert time.time() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL


def assert_same_points(full: Path, resumed: Path, steps: list[int], tolerance: float = 1e-5):
    """Two runs evaluated the same steps to the same held-out loss and BEC-Pro metrics."""
    import pytest

    from cdsbias.runs.points import read_points

    full_points, resumed_points = read_points(full), read_points(resumed)
    assert [p["step"] for p in resumed_points] == [p["step"] for p in full_points] == steps
    for a, b in zip(full_points, resumed_points, strict=True):
        assert b["heldout_loss"] == pytest.approx(a["heldout_loss"], abs=tolerance)
        for key, value in a["benchmarks"]["becpro"]["metrics"].items():
            assert b["benchmarks"]["becpro"]["metrics"][key] == pytest.approx(value, abs=tolerance)


def planted_association_model(
    texts: list[str],
    group_words: list[tuple[str, str]],
    attributes: tuple[str, ...],
    bonus: tuple[float, ...],
):
    """A tiny BERT whose logits at every position are 0, plus ``bonus[g]`` on attribute
    ``g`` when the input names group ``g`` (either of its ``group_words[g]``): ln P(a_g | g)
    = bonus[g] − ln Z and ln P(a_g | h) = −ln Z', so group g's gap is exactly bonus[g] when
    Z = Z'. Returns the model (eval mode) and its WordPiece tokenizer trained on ``texts``
    and the attributes."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from cdsbias.train.wordpiece import train_wordpiece

    tokenizer = train_wordpiece(texts + list(attributes), vocab_size=300)
    ids = tokenizer.convert_tokens_to_ids
    group_ids = [(ids(first), ids(second)) for first, second in group_words]
    attribute_ids = [ids(a) for a in attributes]

    class Planted(BertForMaskedLM):
        def forward(self, input_ids=None, attention_mask=None, **kwargs):
            output = super().forward(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
            logits = torch.zeros_like(output.logits)
            for g, (first, second) in enumerate(group_ids):
                named = ((input_ids == first) | (input_ids == second)).any(dim=1)
                logits[named, :, attribute_ids[g]] = bonus[g]
            output.logits = logits
            return output

    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )  # fmt: skip
    torch.manual_seed(0)
    return Planted(config).eval(), tokenizer


def assert_planted_skew(counts: list[list[int]], total: int, own_share: float) -> None:
    """A planted demo corpus's ``counts[g][a]`` (sentences naming group g and attribute a)
    show what it planted, each share within 4 binomial standard deviations: every sentence
    names one group and one attribute, the k groups are uniform, and group g's attribute is
    its own with ``own_share``, each other with ``(1 − own_share) / (k − 1)``."""
    import math

    k = len(counts)
    assert sum(map(sum, counts)) == total  # one group and one attribute each
    for g, row in enumerate(counts):
        n = sum(row)
        assert abs(n - total / k) < 4 * math.sqrt(total * (1 / k) * (1 - 1 / k))  # uniform
        for a, count in enumerate(row):
            p = own_share if a == g else (1 - own_share) / (k - 1)
            assert abs(count / n - p) < 4 * math.sqrt(p * (1 - p) / n), (g, a, row)
