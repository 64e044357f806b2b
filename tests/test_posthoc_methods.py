"""SentenceDebias, INLP and LEACE as registered ``posthoc`` methods: a run fits once, folds
(or hooks) the map, records the fit, scores before and after; bad inputs fail before
anything is written."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
from tests_helpers import SMOKE, fine_tune, overrides
from transformers import AutoModelForMaskedLM, AutoTokenizer

from cdsbias.errors import CdsbiasError
from cdsbias.methods import plan_from_values
from cdsbias.methods.erasure import ERASURE_RECORD, AffineErasure
from cdsbias.methods.head_fold import hook
from cdsbias.runs.folder import POSTHOC_FIT_FILE, RunFolder
from cdsbias.train.config import load_recipe
from cdsbias.train.run import run

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
]
PRONOUNS = ["posthoc_word_pairs=pronoun_pairs.json", "posthoc_min_sentences_per_class=5"]


@pytest.fixture(scope="module")
def inlp_run(tmp_path_factory, becpro, base):
    out = tmp_path_factory.mktemp("inlp") / "run"
    return fine_tune(out, becpro, base, "posthoc_method=inlp", "inlp_iterations=4",
                     "posthoc_only=true", *PRONOUNS)  # fmt: skip


def logits(model, tokenizer):
    batch = tokenizer(["my [MASK] is a nurse .", "he works as a mason ."], return_tensors="pt",
                      padding=True)  # fmt: skip
    with torch.no_grad():
        return model(**batch).logits


def test_posthoc_only_inlp_folds_what_it_fitted_and_records_it(inlp_run, base):
    assert POSTHOC_FIT_FILE == ERASURE_RECORD  # one file, one name
    record = RunFolder(inlp_run).fit_record()
    assert record["method"] == "inlp" and record["details"]["posthoc_apply"] == "fold"
    assert len(record["dev_accuracy"]) == 4
    # Three classes, one-vs-rest: at most 3 directions per iteration.
    assert 1 <= record["rank_removed"] <= 3 * 4
    assert set(record["sentences_per_class"]) == {"male", "female", "neutral"}
    assert record["details"]["word_pairs"]["source"].endswith("pronoun_pairs.json")
    assert len(record["details"]["word_pairs"]["hash"]) == 12
    # The saved model is plain weights; its logits are the base model's with the hook.
    erasure = AffineErasure.load(inlp_run)
    tokenizer = AutoTokenizer.from_pretrained(base)
    hooked = AutoModelForMaskedLM.from_pretrained(base).eval()
    hook(hooked, erasure)
    folded = AutoModelForMaskedLM.from_pretrained(inlp_run).eval()
    difference = (logits(folded, tokenizer) - logits(hooked, tokenizer)).abs().max()
    assert float(difference) < 1e-5
    plain = AutoModelForMaskedLM.from_pretrained(base).eval()
    assert float((logits(plain, tokenizer) - logits(folded, tokenizer)).abs().max()) > 1e-4
    points = RunFolder(inlp_run).points()
    assert [(p["step"], bool(p.get("posthoc"))) for p in points] == [(0, False), (0, True)]
    info = json.loads((inlp_run / "run_info.json").read_text())["method"]
    assert info["trainable_parameters"] == 0
    assert info["costs"]["post-hoc fit"].endswith(f"{record['rank_removed']} direction(s) removed")
    assert info["label"] == "INLP (fold), no training"


@pytest.fixture(scope="module")
def hook_run(tmp_path_factory, becpro, base):
    out = tmp_path_factory.mktemp("hook") / "run"
    return fine_tune(out, becpro, base, "posthoc_method=leace", "posthoc_apply=hook",
                     "posthoc_only=true", *PRONOUNS)  # fmt: skip


def test_hook_mode_keeps_the_weights_and_scores_through_the_hook(hook_run, base):
    out = hook_run
    record = RunFolder(out).fit_record()
    assert record["method"] == "leace" and record["details"]["posthoc_apply"] == "hook"
    tokenizer = AutoTokenizer.from_pretrained(base)
    saved = AutoModelForMaskedLM.from_pretrained(out).eval()
    plain = AutoModelForMaskedLM.from_pretrained(base).eval()
    assert torch.equal(logits(saved, tokenizer), logits(plain, tokenizer))  # hook not saved
    before, after = RunFolder(out).points()
    assert before["benchmarks"]["becpro"]["metrics"] != after["benchmarks"]["becpro"]["metrics"]


def test_evaluate_of_a_hook_run_reattaches_the_hook(hook_run, becpro, base, tmp_path):
    """`cdsbias evaluate RUN` scores what the callback's post-hoc point scored, row for row
    (the hook re-attached from posthoc_erasure.safetensors); its checkpoint-free weights
    alone score the plain point."""
    from cdsbias.cli import main as cli
    from cdsbias.methods import attached_methods
    from cdsbias.scoring import load_masked_lm

    assert [m.name for m in attached_methods(hook_run)] == ["leace"]
    out = tmp_path / "evaluate"
    argv = ["evaluate", str(hook_run), "-b", "becpro", "--data", str(becpro), "--option",
            "n_resamples=50", "--batch-size", "128", "--out", str(out), "--quiet"]  # fmt: skip
    assert cli(argv) == 0
    folder = RunFolder(hook_run)
    ours = pd.read_csv(out / "becpro" / "rows.tsv", sep="\t")
    after = pd.read_csv(folder.results_dir(0, posthoc=True) / "becpro" / "rows.tsv", sep="\t")
    before = pd.read_csv(folder.results_dir(0) / "becpro" / "rows.tsv", sep="\t")
    for column in ("p_tm", "p_tam", "association"):
        assert ours[column].tolist() == after[column].tolist()
    assert ours["association"].tolist() != before["association"].tolist()
    drop = ("model", "step")  # each side names what it scored
    ours, stored = (json.loads((where / "becpro" / "summary.json").read_text())
                    for where in (out, folder.results_dir(0, posthoc=True)))  # fmt: skip
    assert {k: v for k, v in ours.items() if k not in drop} == {
        k: v for k, v in stored.items() if k not in drop
    }
    # The hooked model's logits are the base model's with the saved map hooked on.
    tokenizer = AutoTokenizer.from_pretrained(base)
    loaded, _ = load_masked_lm(hook_run, progress=False)
    hooked = AutoModelForMaskedLM.from_pretrained(base).eval()
    hook(hooked, AffineErasure.load(hook_run))
    assert torch.equal(logits(loaded, tokenizer), logits(hooked, tokenizer))


def test_a_hook_run_publishes_the_map_and_its_card_attaches_it(
    hook_run, base, tmp_path, monkeypatch
):
    from huggingface_hub import ModelCard
    from test_publish_adapters import run_card_code

    from cdsbias.cli import main as cli
    from cdsbias.methods.erasure import ERASURE_FILE
    from cdsbias.scoring import load_masked_lm

    out = tmp_path / "published"
    assert cli(["publish", str(hook_run), "--repo-id", "org/hooked", "--dry-run", "--out",
                str(out)]) == 0  # fmt: skip
    assert (out / ERASURE_FILE).read_bytes() == (hook_run / ERASURE_FILE).read_bytes()
    card = ModelCard.load(out / "README.md")
    assert "register_forward_hook(erase)" in card.text
    model, tokenizer = run_card_code(card.text, {"org/hooked": out}, tmp_path / "hub",
                                     monkeypatch)  # fmt: skip
    reference, _ = load_masked_lm(hook_run, progress=False)
    expected = logits(reference, tokenizer)
    assert torch.equal(logits(model.eval(), tokenizer), expected)
    plain = AutoModelForMaskedLM.from_pretrained(out).eval()  # the hook is not in the weights
    assert float((logits(plain, tokenizer) - expected).abs().max()) > 1e-4


HALL_MAUDSLAY = "Hall Maudslay, R., Gonen, H., Cotterell, R., & Teufel, S. (2019)"
RAVFOGEL = "Ravfogel, S., Elazar, Y., Gonen, H., Twiton, M., & Goldberg, Y. (2020)"


def published_card(run_folder, tmp_path, name="published"):
    from huggingface_hub import ModelCard

    from cdsbias.cli import main as cli

    out = tmp_path / name
    assert cli(["publish", str(run_folder), "--repo-id", f"org/{name}", "--dry-run", "--out",
                str(out)]) == 0  # fmt: skip
    return ModelCard.load(out / "README.md")


def test_the_card_of_a_posthoc_only_run_names_only_the_posthoc_method(inlp_run, tmp_path):
    """score -> fit -> score trained nothing: no training method, no CDS tag or paper, no
    trained-parameter count; the fit is stated from its record."""
    card = published_card(inlp_run, tmp_path)
    record = RunFolder(inlp_run).fit_record()
    counts = record["sentences_per_class"]
    assert set(card.data.tags) == {"cdsbias", "gender-bias", "debiasing", "inlp"}
    text = card.text
    assert (
        "**Method**: INLP (fold), no training: the post-hoc method acted on the model as loaded."
        in text
    )
    assert (f"fitted once on original sentences of the run's corpus (male {counts['male']}, "
            f"female {counts['female']}, neutral {counts['neutral']}), removing "
            f"{record['rank_removed']} direction(s), and folded into the first layer of the "
            "MLM head") in text  # fmt: skip
    assert "not fine-tuned (`posthoc_only: true`)" in text
    for trained in ("full fine-tuning", "every weight", "parameters", "trained with",
                    "counterfactual data substitution**", HALL_MAUDSLAY, "learning_rate",
                    "cds_mode", "## Training recipe"):  # fmt: skip
        assert trained not in text, trained
    assert RAVFOGEL in text and "inlp_iterations: 4" in text


def test_the_card_of_cds_then_inlp_names_both_and_its_checkpoint_only_cds(tmp_path, becpro, base):
    out = fine_tune(tmp_path / "run", becpro, base, "posthoc_method=inlp", "inlp_iterations=2",
                    *PRONOUNS)  # fmt: skip
    card = published_card(out, tmp_path)
    assert {"counterfactual-data-substitution", "inlp"} <= set(card.data.tags)
    assert "trained with **counterfactual data substitution**" in card.text
    assert "**Training method**: full fine-tuning + INLP (fold): 45,280 of 45,280" in card.text
    assert "- **full fine-tuning**: every weight" in card.text and "- **INLP**: " in card.text
    assert HALL_MAUDSLAY in card.text and RAVFOGEL in card.text
    # checkpoint-2 was saved by training, before the fit: INLP did not act on it.
    card = published_card(out / "checkpoint-2", tmp_path, "checkpoint")
    assert "inlp" not in card.data.tags and "counterfactual-data-substitution" in card.data.tags
    assert "**Training method**: full fine-tuning: 45,280 of 45,280" in card.text
    assert "- **INLP**" not in card.text and RAVFOGEL not in card.text


def test_sentence_debias_after_training(tmp_path, becpro, base):
    out = fine_tune(tmp_path / "run", becpro, base, "posthoc_method=sentence_debias")
    record = RunFolder(out).fit_record()
    assert record["method"] == "sentence_debias" and record["rank_removed"] == 1
    assert record["sentences_per_class"]["pairs"] > 0
    points = RunFolder(out).points()
    assert [(p["step"], bool(p.get("posthoc"))) for p in points] == [(2, False), (2, True)]
    assert (out / "checkpoint-2").is_dir()


def test_recipe_keys_of_the_wrong_method_fail():
    with pytest.raises(CdsbiasError, match=r"Unknown posthoc_method 'inpl'\. Did you mean 'inlp'"):
        plan_from_values({"posthoc_method": "inpl"})
    given = {"posthoc_method": "leace", "inlp_iterations": 5}
    with pytest.raises(CdsbiasError, match="inlp_iterations applies only to posthoc_method: inlp"):
        plan_from_values(given, given=given)
    given = {"posthoc_apply": "hook"}
    with pytest.raises(CdsbiasError, match="posthoc_apply applies only to posthoc_method: "):
        plan_from_values(given, given=given)
    given = {"posthoc_method": "sentence_debias", "posthoc_sentences_per_class": 50}
    with pytest.raises(CdsbiasError, match=r"posthoc_sentences_per_class applies only to "
                       r"posthoc_method: inlp \| leace"):  # fmt: skip
        plan_from_values(given, given=given)
    with pytest.raises(CdsbiasError, match="posthoc_apply must be fold or hook, got 'glue'"):
        plan_from_values({"posthoc_method": "inlp", "posthoc_apply": "glue"})
    with pytest.raises(CdsbiasError, match=r"INLP \(posthoc_method: inlp\) changes the model's "
                       r"weights after training, but a LoRA run saves only its own files; use "
                       r"posthoc_apply: hook"):  # fmt: skip
        plan_from_values({"posthoc_method": "inlp", "peft_method": "lora"})
    plan = plan_from_values({"posthoc_method": "inlp", "peft_method": "lora",
                             "posthoc_apply": "hook"})  # fmt: skip
    assert plan.label() == "LoRA r=8 + INLP (hook)"
    two = {"posthoc_method": "inlp", "self_debias": True}
    with pytest.raises(CdsbiasError) as caught:  # the keys the user wrote, not registry names
        plan_from_values(two)
    assert str(caught.value) == (
        "A run has at most one posthoc method; the recipe selects INLP (posthoc_method: "
        "inlp); Self-Debias (self_debias: true). Remove all but one."
    )


def run_fails(tmp_path, becpro, base, *keys):
    out = tmp_path / "run"
    recipe = load_recipe(SMOKE, overrides(out, becpro, "init_from_scratch=false",
                                          f"model_name_or_path={base}", *keys))  # fmt: skip
    with pytest.raises(CdsbiasError) as error:
        run(recipe)
    assert not out.exists(), "a failed post-hoc check wrote into the output folder"
    return str(error.value)


def test_bad_inputs_fail_before_anything_is_written(tmp_path, becpro, base, monkeypatch):
    message = run_fails(tmp_path, becpro, base, "posthoc_method=inlp", "posthoc_only=true",
                        "posthoc_word_pairs=pronoun_pairs.json")  # fmt: skip
    assert "100" in message and "neutral" in message  # the counts found, the minimum
    pairs = tmp_path / "pairs.json"
    pairs.write_text(json.dumps({"gender": [["xyzzy", "plugh"]]}))
    message = run_fails(tmp_path, becpro, base, "posthoc_method=sentence_debias",
                        f"posthoc_word_pairs={pairs}")  # fmt: skip
    assert message.startswith("None of the 1 word pairs") and "occurs as a" in message
    from cdsbias.methods import head_fold

    monkeypatch.delitem(head_fold.HEAD_LAYERS, "BertForMaskedLM")
    message = run_fails(tmp_path, becpro, base, "posthoc_method=inlp", *PRONOUNS)
    assert "posthoc_apply: fold does not know where the MLM head of BertForMaskedLM starts" in (
        message
    )
    assert "posthoc_apply: hook" in message


def test_only_the_main_process_writes_the_fit(tmp_path, base):
    """The fit a process receives (``context.fit``) is applied on every process; the record
    and map are written by the main process only (a multi-process launch: see
    test_train_distributed.py for the fit itself running once)."""
    import numpy as np

    from cdsbias.methods.base import PosthocContext

    tokenizer = AutoTokenizer.from_pretrained(base)
    size = AutoModelForMaskedLM.from_pretrained(base).config.hidden_size
    u = np.zeros(size)
    u[0] = 1.0
    erasure = AffineErasure("inlp", np.eye(size) - np.outer(u, u), np.zeros(size), 1)
    for main, folder in ((False, tmp_path / "other"), (True, tmp_path / "main")):
        folder.mkdir()
        model = AutoModelForMaskedLM.from_pretrained(base).eval()
        method = plan_from_values({"posthoc_method": "inlp"}).posthoc
        context = PosthocContext(documents=None, tokenizer=tokenizer, scorer=None,
                                 folder=RunFolder(folder), fit=lambda *_, **__: erasure,
                                 main_process=main)  # fmt: skip
        folded = method.after_training(model, context)
        hooked = AutoModelForMaskedLM.from_pretrained(base).eval()
        hook(hooked, erasure)
        assert float((logits(folded, tokenizer) - logits(hooked, tokenizer)).abs().max()) < 1e-5
        assert sorted(p.name for p in folder.iterdir()) == (
            sorted([ERASURE_RECORD, "posthoc_erasure.safetensors"]) if main else []
        )


@pytest.mark.filterwarnings("ignore::cdsbias.scoring.language.LanguageMismatchWarning")
def test_seat_of_a_folded_run_equals_the_hooked_runs_and_the_card_says_what_it_read(
    tmp_path, becpro, base
):
    """A SentenceDebias run folds its map into the head, yet its post-hoc SEAT reads the
    encoder through the map, as bias-bench (and the same run with posthoc_apply: hook)
    does; the summary and the card say which states each point read."""
    from conftest import ASSETS
    from tests_helpers import fine_tune

    from cdsbias.runs.card import model_card
    from cdsbias.runs.points import read_points

    spec = f"{{seat: {{data_file: {ASSETS / 'seat'}, tests: [mini-career], n_samples: 1000}}}}"
    keys = ("posthoc_method=sentence_debias", "posthoc_only=true", f"bias_benchmarks={spec}",
            "posthoc_word_pairs=pronoun_pairs.json")  # fmt: skip
    runs = {mode: fine_tune(tmp_path / mode, becpro, base, f"posthoc_apply={mode}", *keys)
            for mode in ("fold", "hook")}  # fmt: skip
    seat = {mode: [p["benchmarks"]["seat"]["metrics"] for p in read_points(out)]
            for mode, out in runs.items()}  # fmt: skip
    assert seat["fold"][1] == seat["hook"][1]  # the post-hoc points
    assert seat["fold"][1] != seat["fold"][0]  # the map moved SEAT
    folder = RunFolder(runs["fold"])
    before, after = (folder.summary_at(0, "seat", posthoc=posthoc) for posthoc in (False, True))
    assert before["representation"] == "encoder"
    assert after["representation"] == "encoder through the SentenceDebias map (fold)"
    card = str(model_card(runs["fold"], "user/sentence-debias"))
    assert (
        "Hidden states read: before: encoder; after: encoder through the SentenceDebias map "
        "(fold)." in card
    )
