"""Self-Debias as a registered ``posthoc`` method: a posthoc-only run scores before and
after, the after point is what ``cdsbias evaluate --self-debias`` gives, compare shows the
cost, and bad recipes fail when read."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tests_helpers import SMOKE, fine_tune, overrides
from transformers import AutoTokenizer

from cdsbias.cli import main as cli
from cdsbias.errors import CdsbiasError
from cdsbias.methods import plan_from_values
from cdsbias.runs.folder import RunFolder
from cdsbias.scoring.self_debias import GENDER_PREFIX
from cdsbias.train.config import load_recipe

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
]


@pytest.fixture(scope="module")
def posthoc_run(tmp_path_factory, becpro, base):
    out = tmp_path_factory.mktemp("sd") / "run"
    return fine_tune(out, becpro, base, "self_debias=true", "posthoc_only=true")


def becpro_summary(folder, step, posthoc=False):
    path = RunFolder(folder).results_dir(step, posthoc=posthoc) / "becpro" / "summary.json"
    return json.loads(path.read_text())


def test_posthoc_only_scores_before_and_after(posthoc_run, becpro, tmp_path):
    points = RunFolder(posthoc_run).points()
    assert [(p["step"], bool(p.get("posthoc"))) for p in points] == [(0, False), (0, True)]
    before, after = (p["benchmarks"]["becpro"]["metrics"] for p in points)
    assert before != after
    # Before is the plain model, after is Self-Debias's p': what `cdsbias evaluate` gives.
    for flags, step, posthoc in (([], 0, False), (["--self-debias"], 0, True)):
        out = tmp_path / f"evaluate-{posthoc}"
        assert cli(["evaluate", str(posthoc_run), "-b", "becpro", "--data", str(becpro),
                    "--option", "n_resamples=50", "--batch-size", "128", "--out", str(out),
                    "--quiet", *flags]) == 0  # fmt: skip
        ours = json.loads((out / "becpro" / "summary.json").read_text())
        stored = becpro_summary(posthoc_run, step, posthoc)
        drop = ("model", "step")
        assert {k: v for k, v in ours.items() if k not in drop} == {
            k: v for k, v in stored.items() if k not in drop
        }
    assert becpro_summary(posthoc_run, 0, True)["self_debias"]["decay_constant"] == 50.0
    # Both held-out losses read through the scorer; p' costs likelihood on the true tokens.
    assert points[0]["heldout_loss"] != points[1]["heldout_loss"]
    info = json.loads((posthoc_run / "run_info.json").read_text())["method"]
    assert info["trainable_parameters"] == 0 and info["methods"] == ["full", "self_debiasing"]
    assert not (posthoc_run / "checkpoint-2").exists()  # nothing trained


def test_lambda_zero_changes_nothing(tmp_path, becpro, base):
    run = fine_tune(tmp_path / "run", becpro, base, "self_debias=true", "posthoc_only=true",
                    "self_debias_lambda=0")  # fmt: skip
    before, after = RunFolder(run).points()
    assert before["benchmarks"]["becpro"]["metrics"] == after["benchmarks"]["becpro"]["metrics"]
    assert before["heldout_loss"] == after["heldout_loss"]


def test_compare_shows_no_trainable_parameters_and_the_inference_cost(posthoc_run, base, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(base)
    extra = len(tokenizer(GENDER_PREFIX, add_special_tokens=False)["input_ids"])
    assert cli(["compare", str(posthoc_run), "--out", str(tmp_path)]) == 0
    table = (tmp_path / "comparison.md").read_text()
    assert "| wall time | inference cost |" in table.splitlines()[0]
    row = table.splitlines()[2]
    assert "| 0 (0%) |" in row
    assert f"| 2 forward passes, +{extra} tokens per prediction |" in row
    assert "run 0 → 0 + post-hoc" in table
    csv = pd.read_csv(tmp_path / "comparison.csv")
    assert csv["inference cost"].iloc[0] == f"2 forward passes, +{extra} tokens per prediction"
    assert csv["trainable_parameters"].iloc[0] == 0


def test_bad_recipes_fail_when_read(tmp_path, becpro):
    def load(*keys):
        return load_recipe(SMOKE, overrides(tmp_path / "x", becpro, *keys))

    with pytest.raises(CdsbiasError, match=r"self_debias: true cannot score becpro: compat="):
        load("self_debias=true",
             f"bias_benchmarks={{becpro: {{data_file: {becpro}, compat: bartl2020}}}}")  # fmt: skip
    with pytest.raises(CdsbiasError, match="posthoc_only: true trains nothing and applies a "
                       "post-hoc method, but the recipe chooses none"):  # fmt: skip
        load("posthoc_only=true")
    with pytest.raises(CdsbiasError, match=r"posthoc_only: true trains nothing, but the recipe "
                       r"also chooses LoRA \(peft_method: lora\)"):  # fmt: skip
        load("posthoc_only=true", "self_debias=true", "peft_method=lora")
    with pytest.raises(CdsbiasError, match=r"self_debias_epsilon must be in \(0, 1\], got 0"):
        load("self_debias=true", "self_debias_epsilon=0")
    with pytest.raises(CdsbiasError, match="self_debias_lambda applies only to self_debias: true"):
        load("self_debias_lambda=10")
    assert not (tmp_path / "x").exists()  # nothing written


def test_plan_wraps_the_scorer_without_touching_the_plain_one(base):
    from cdsbias.scoring import MaskedLMScorer
    from cdsbias.scoring.self_debias import DECAY_CONSTANT, EPSILON

    plan = plan_from_values({"self_debias": True, "self_debias_prefix": "Be fair: "})
    assert plan.changes_scoring and plan.label().endswith("Self-Debias (lambda 50, epsilon 0.01)")
    options = plan.posthoc.options  # the recipe's defaults are the scorer's
    assert (options.self_debias_lambda, options.self_debias_epsilon) == (DECAY_CONSTANT, EPSILON)
    plain = MaskedLMScorer.from_pretrained(str(base))
    wrapped = plan.wrap_scorer(plain)
    assert plain.self_debias is None and wrapped.self_debias.prefix == "Be fair: "
    assert wrapped.model is plain.model
    extra = len(plain.tokenizer("Be fair: ", add_special_tokens=False)["input_ids"])
    assert plan.costs() == {"inference cost": f"2 forward passes, +{extra} tokens per prediction"}
    assert plan_from_values({}).wrap_scorer(plain) is plain


def test_the_card_of_a_posthoc_only_run_shows_before_and_after(posthoc_run, tmp_path):
    out = tmp_path / "published"
    assert cli(["publish", str(posthoc_run), "--repo-id", "org/sd", "--dry-run",
                "--out", str(out)]) == 0  # fmt: skip
    card = (out / "README.md").read_text()
    assert "## Bias before (step 0) and after (step 0, post-hoc)" in card
    assert "- **Self-Debias**: the reported scores after it were read under Self-Debias" in card
    assert "Schick, T., Udupa, S., & Schütze, H. (2021)" in card
    # Nothing trained: no training method, CDS tag or paper, or trained-parameter count.
    assert "**Method**: Self-Debias (lambda 50, epsilon 0.01), no training: the post-hoc" in card
    tags = card[: card.index("model-index:")]
    assert "- self-debias" in tags and "counterfactual-data-substitution" not in tags
    # Nor keys that shaped nothing here: training's, CDS's, a fitted projection's.
    for trained in ("full fine-tuning", "parameters", "Hall Maudslay", "learning_rate",
                    "cds_mode", "posthoc_apply", "posthoc_sentences_per_class"):  # fmt: skip
        assert trained not in card, trained


# ------------------------------------------------------- a prefix too long for the model
@pytest.fixture(scope="module")
def short_bert(tmp_path_factory):
    """The tiny BERT with 40 positions: BEC-Pro's longest text (33 tokens with the special
    ones on this vocabulary) leaves room for a prefix of 7 pieces at most."""
    from tiny_models import tiny_masked_lm

    return tiny_masked_lm("bert", tmp_path_factory.mktemp("short") / "bert", max_positions=40)


def lengths(model, becpro, prefix):
    """Pieces of ``prefix`` as Self-Debias inserts it (WordPiece: the prefix alone) and
    BEC-Pro's longest text with special tokens, counted with the tokenizer directly."""
    tokenizer = AutoTokenizer.from_pretrained(model)
    rows = pd.read_csv(becpro, sep="\t")
    texts = {v for column in rows.columns for v in rows[column] if isinstance(v, str)}
    longest = max(len(tokenizer(text)["input_ids"]) for text in texts)
    return len(tokenizer(prefix, add_special_tokens=False)["input_ids"]), longest


def test_a_prefix_too_long_fails_before_evaluate_writes(short_bert, becpro, tmp_path, capsys):
    prefix = "he she he she he she he she he she"  # 10 pieces: 33 + 10 > 40
    extra, longest = lengths(short_bert, becpro, prefix)
    assert (extra, longest) == (10, 33)
    out = tmp_path / "out"
    argv = ["evaluate", str(short_bert), "-b", "becpro", "--data", str(becpro), "--out",
            str(out), "--quiet", "--self-debias", prefix]  # fmt: skip
    assert cli(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and error.startswith("error: becpro: The Self-Debias prefix")
    assert "is 33 (special tokens included): 43 with the prefix" in error
    assert "accepts 40 at most" in error and "--self-debias PREFIX" in error
    assert not out.exists()
    fits = "he she he she he she he"  # 7 pieces: 33 + 7 = 40 passes the check
    assert lengths(short_bert, becpro, fits)[0] == 7
    argv[-1] = fits
    assert cli(argv) == 0 and (out / "becpro" / "summary.json").is_file()


def test_a_prefix_longer_than_the_model_fails_alone(short_bert, becpro, tmp_path, capsys):
    prefix = " ".join(["he"] * 39)  # 39 pieces + [CLS] and [SEP] = 41 > 40
    argv = ["evaluate", str(short_bert), "-b", "becpro", "--data", str(becpro), "--out",
            str(tmp_path / "out"), "--quiet", "--self-debias", prefix]  # fmt: skip
    assert cli(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error == (
        "error: The Self-Debias prefix is 39 tokens; with the model's 2 special tokens that "
        "is 41, but the model accepts 40 at most: use a shorter prefix (self_debias_prefix "
        "in a recipe, --self-debias PREFIX for cdsbias evaluate) or a model with more "
        "positions (max_position_embeddings)."
    )
    assert not (tmp_path / "out").exists()


def test_a_run_with_a_prefix_too_long_fails_before_step_0(short_bert, becpro, tmp_path):
    """Before the check the run scored and wrote step 0, then failed at its post-hoc point."""
    from cdsbias.train.run import run

    out = tmp_path / "run"
    keys = overrides(out, becpro, "init_from_scratch=false", f"model_name_or_path={short_bert}",
                     "self_debias=true", "posthoc_only=true",
                     "self_debias_prefix='he she he she he she he she he she'")  # fmt: skip
    with pytest.raises(CdsbiasError, match=r"^becpro: The Self-Debias prefix is 10 tokens.*"
                       r"43 with the prefix, but the model accepts 40 at most; use a shorter "
                       r"prefix \(self_debias_prefix"):  # fmt: skip
        run(load_recipe(SMOKE, keys))
    assert not out.exists()
