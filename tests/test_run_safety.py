"""A failed run never deletes or damages an earlier one (issue 26, item 2).

``train.py ... overwrite_output_dir=true`` over an earlier run, with an input that fails its
check (too few INLP fit sentences, a hooked run as the model, an empty Context-Debias word
file, a Self-Debias prefix longer than the model's positions, a SEAT layer the model lacks):
one ``error:`` line, and every file of the earlier run byte-identical (sha256 before and
after). A run that fails after it started writing puts the earlier run back; one that
succeeds replaces it and leaves no set-aside copy. ``cdsbias evaluate`` with several
benchmarks refuses a bad option of one of them before any result is written.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tests_helpers import SMOKE, fine_tune, overrides

from cdsbias.cli import main as cli
from cdsbias.train.run import main as train_main

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
]
ASSETS = Path(__file__).parent / "assets"
PRONOUNS = ["posthoc_word_pairs=pronoun_pairs.json", "posthoc_min_sentences_per_class=5"]


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``, by relative path."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def earlier(tmp_path_factory, becpro, base) -> Path:
    """A finished 2-step run of ``base``: the run a failed command must leave as it is."""
    return fine_tune(tmp_path_factory.mktemp("earlier") / "run", becpro, base)


@pytest.fixture(scope="module")
def hook_run(tmp_path_factory, becpro, base) -> Path:
    out = tmp_path_factory.mktemp("hook") / "run"
    return fine_tune(out, becpro, base, "posthoc_method=leace", "posthoc_apply=hook",
                     "posthoc_only=true", *PRONOUNS)  # fmt: skip


@pytest.fixture(scope="module")
def short_bert(tmp_path_factory) -> Path:
    """The tiny BERT with 40 positions: BEC-Pro's longest text is 33 tokens on it."""
    from tiny_models import tiny_masked_lm

    return tiny_masked_lm("bert", tmp_path_factory.mktemp("short") / "bert", max_positions=40)


def overwrite(earlier: Path, becpro: Path, model: Path, *extra: str) -> list[str]:
    """``train.py`` arguments of a run over ``earlier`` with overwrite_output_dir=true."""
    keys = overrides(earlier, becpro, "init_from_scratch=false", f"model_name_or_path={model}",
                     "overwrite_output_dir=true", *extra)  # fmt: skip
    return [str(SMOKE), *keys]


def assert_fails_and_keeps(argv: list[str], earlier: Path, capsys, *expected: str) -> str:
    """``train.py ARGV`` exits 2 with one ``error:`` line holding ``expected``, and leaves
    every file of ``earlier`` as it was, with no set-aside copy beside it."""
    before = digest(earlier)
    capsys.readouterr()
    assert train_main(argv) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, errors
    for text in expected:
        assert text in errors[0], errors[0]
    assert digest(earlier) == before
    assert not list(earlier.parent.glob(f"{earlier.name}.replaced-*"))
    return errors[0]


def test_too_few_inlp_fit_sentences_keep_the_earlier_run(earlier, becpro, base, capsys):
    argv = overwrite(earlier, becpro, base, "posthoc_method=inlp", "posthoc_only=true",
                     "posthoc_min_sentences_per_class=5000", "inlp_iterations=3")  # fmt: skip
    assert_fails_and_keeps(argv, earlier, capsys, "INLP found too few fit sentences")


def test_a_hooked_run_as_the_model_keeps_the_earlier_run(earlier, becpro, hook_run, capsys):
    argv = overwrite(earlier, becpro, hook_run)
    assert_fails_and_keeps(argv, earlier, capsys, f"{hook_run} holds a LEACE applied on top")


def test_an_empty_context_debias_word_file_keeps_the_earlier_run(
    earlier, becpro, base, tmp_path, capsys
):
    empty = tmp_path / "professions.txt"
    empty.write_text("# no word yet\n", encoding="utf-8")
    argv = overwrite(earlier, becpro, base, "debias_loss=context_debias",
                     "context_debias_batch_size=4", "context_debias_max_sentences=16",
                     f"context_debias_stereotype_words={empty}")  # fmt: skip
    assert_fails_and_keeps(argv, earlier, capsys, f"The word list {empty} holds no word")


def test_a_self_debias_prefix_too_long_keeps_the_earlier_run(earlier, becpro, short_bert, capsys):
    argv = overwrite(earlier, becpro, short_bert, "self_debias=true", "posthoc_only=true",
                     "self_debias_prefix='he she he she he she he she he she'")  # fmt: skip
    assert_fails_and_keeps(argv, earlier, capsys, "The Self-Debias prefix is 10 tokens")


def test_a_seat_layer_the_model_lacks_keeps_the_earlier_run(earlier, becpro, base, capsys):
    seat = f"seat: {{data_file: {ASSETS / 'seat'}, tests: [mini-career], layer: 9}}"
    argv = overwrite(earlier, becpro, base)
    argv = [*argv, f"bias_benchmarks={{becpro: {{data_file: {becpro}}}, {seat}}}"]
    assert_fails_and_keeps(argv, earlier, capsys, "seat: layer 9 does not exist")


def test_a_run_failing_after_it_started_puts_the_earlier_run_back(
    earlier, becpro, base, monkeypatch, capsys
):
    """Past every check the earlier run is set aside; a failure then (here in training,
    after the new run wrote its recipe and run info) removes the new folder and puts the
    earlier run back."""
    from cdsbias.train.trainer import DebiasTrainer

    seen = {}

    def crash(self, *args, **kwargs):
        seen["aside"] = sorted(earlier.parent.glob(f"{earlier.name}.replaced-*"))
        seen["new"] = sorted(p.name for p in earlier.iterdir())
        raise RuntimeError("the machine went away")

    monkeypatch.setattr(DebiasTrainer, "train", crash)
    before = digest(earlier)
    with pytest.raises(RuntimeError, match="went away"):
        train_main(overwrite(earlier, becpro, base))
    assert len(seen["aside"]) == 1 and "recipe.yaml" in seen["new"]
    assert "checkpoint-2" not in seen["new"]  # the new run's folder, not the earlier one
    assert digest(earlier) == before
    assert not list(earlier.parent.glob(f"{earlier.name}.replaced-*"))
    assert "kept as" in capsys.readouterr().out


def test_a_finished_run_replaces_the_earlier_one(tmp_path, becpro, base):
    out = fine_tune(tmp_path / "run", becpro, base)
    (out / "left-over.txt").write_text("only the earlier run had this", encoding="utf-8")
    assert train_main(overwrite(out, becpro, base, "max_steps=1", "save_steps=1")) == 0
    assert not (out / "left-over.txt").exists() and (out / "checkpoint-1").is_dir()
    assert not (out / "checkpoint-2").exists()
    assert not list(tmp_path.glob("run.replaced-*"))


def test_evaluate_checks_every_benchmark_before_writing(base, becpro, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["evaluate", str(base), "-b", "becpro", "--data", str(becpro), "--out", str(out),
            "--quiet", "--option", "n_resamples=20"]  # fmt: skip
    assert cli(argv) == 0
    before = digest(out)
    argv = ["evaluate", str(base), "-b", "becpro,seat", "--out", str(out), "--quiet",
            "--option", f"becpro.data_file={becpro}", "--option", "becpro.n_resamples=20",
            "--option", f"seat.data_file={ASSETS / 'seat'}", "--option", "seat.tests=[mini-career]",
            "--option", "seat.layer=9", "--overwrite"]  # fmt: skip
    capsys.readouterr()
    assert cli(argv) == 2  # even told to replace OUT/becpro/, a bad option keeps it
    error = capsys.readouterr().err.strip()
    assert error == (
        "error: seat: layer 9 does not exist: the model has hidden states 0..2 "
        "(0 = embeddings, -1 = last layer)."
    )
    assert digest(out) == before


def test_the_earlier_run_is_deleted_at_the_first_checkpoint(tmp_path, becpro, base, monkeypatch):
    """Once the new run has a complete checkpoint, the earlier run is gone: a failure after
    it keeps the new run (resumable from that checkpoint) rather than the earlier one."""
    from cdsbias.train.output_folder import DiscardReplacedRun

    out = fine_tune(tmp_path / "run", becpro, base)
    (out / "left-over.txt").write_text("only the earlier run had this", encoding="utf-8")
    discard = DiscardReplacedRun.on_save

    def save_then_crash(self, args, state, control, **kwargs):
        discard(self, args, state, control, **kwargs)
        raise RuntimeError(f"crashed after checkpoint-{state.global_step}")

    monkeypatch.setattr(DiscardReplacedRun, "on_save", save_then_crash)
    with pytest.raises(RuntimeError, match="after checkpoint-1"):
        train_main(overwrite(out, becpro, base, "max_steps=2", "save_steps=1"))
    assert not list(tmp_path.glob("run.replaced-*"))
    assert not (out / "left-over.txt").exists()
    assert (out / "checkpoint-1" / "trainer_state.json").is_file()
