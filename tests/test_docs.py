"""The pages run as written: the worked examples of docs/adding_a_benchmark.md and
docs/adding_a_method.md meet their contracts, and every command in a ```bash block of
README.md or docs/*.md is accepted by what would run it (the cdsbias parser, train.py's
recipe loader, the Makefile, the scripts folder)."""

from __future__ import annotations

import re
import shlex
import sys
import types
from pathlib import Path

import pytest
from conftest import REPO

from cdsbias.benchmarks import REGISTRY, build_benchmark
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer


def run_worked_example(page: str, module_name: str):
    """Executes the first python block of ``docs/PAGE`` as module ``module_name`` (so that
    dataclasses resolve their annotations through it); yields, then removes the module."""
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module
    try:
        exec(compile(code, f"docs/{page}", "exec"), module.__dict__)
        yield
    finally:
        sys.modules.pop(module_name, None)


@pytest.fixture
def example_benchmark():
    for _ in run_worked_example("adding_a_benchmark.md", "cdsbias.benchmarks.pronoun_preference"):
        try:
            yield REGISTRY["pronoun_preference"]
        finally:
            REGISTRY.pop("pronoun_preference", None)


def test_worked_example_runs_through_the_interface(example_benchmark, real_vocab_bert, tmp_path):
    scorer = MaskedLMScorer.from_pretrained(str(real_vocab_bert), progress=False)
    bench = build_benchmark("pronoun_preference", {"n_resamples": 100})
    result = bench.evaluate(scorer)
    he = scorer.target_log_probs(["[MASK] works here."], ["He"])[0]
    she = scorer.target_log_probs(["[MASK] works here."], ["She"])[0]
    assert result.rows["preference"].iloc[2] == pytest.approx(he - she, abs=1e-6)
    assert result.metrics["mean_preference"] == pytest.approx(result.rows["preference"].mean())
    assert "pronoun preference (3 sentences)" in result.report
    with pytest.raises(CdsbiasError, match="'n_resamples' must be at least 1, got 0"):
        build_benchmark("pronoun_preference", {"n_resamples": 0})


# ------------------------------------------------------------------ docs/adding_a_method.md
@pytest.fixture
def example_method():
    from cdsbias.methods import REGISTRY as METHODS

    for _ in run_worked_example("adding_a_method.md", "cdsbias.methods.equalizing_loss"):
        try:
            yield METHODS["equalizing_loss"]
        finally:
            METHODS.pop("equalizing_loss", None)


def test_worked_method_example_adds_its_term_by_hand(example_method, base):
    import torch

    from cdsbias.methods import plan_from_values
    from cdsbias.scoring import load_masked_lm

    model, tokenizer = load_masked_lm(base, progress=False)
    plan = plan_from_values({"equalizing_loss_weight": 0.5})
    assert plan.names == ["full", "equalizing_loss"] and plan.loss.role == "loss"
    plan.prepare(model, tokenizer)
    batch = tokenizer(["he is a nurse .", "my sister works ."], return_tensors="pt", padding=True)
    labels = torch.full_like(batch["input_ids"], -100)
    labels[0, 1], labels[1, 2] = batch["input_ids"][0, 1], batch["input_ids"][1, 2]
    with torch.no_grad():
        outputs = model(**batch, labels=labels)
        term = plan.loss.loss_terms(model, {**batch, "labels": labels}, outputs)["equalizing"]
    log_probs = torch.log_softmax(outputs.logits, -1)
    vocab = tokenizer.get_vocab()
    words = sys.modules["cdsbias.methods.equalizing_loss"].PAIRS
    pairs = [(vocab[m], vocab[f]) for m, f in words if m in vocab and f in vocab]
    assert pairs
    gaps = [abs(log_probs[r, c, m] - log_probs[r, c, f]) for r, c in ((0, 1), (1, 2))
            for m, f in pairs]  # fmt: skip
    assert term.item() == pytest.approx(0.5 * float(sum(gaps)) / len(gaps), rel=1e-6)
    with pytest.raises(CdsbiasError, match="equalizing_loss_weight must be 0 or more"):
        plan_from_values({"equalizing_loss_weight": -1.0})


@pytest.mark.usefixtures("one_thread")
def test_worked_method_example_trains_logs_and_cites(example_method, base, becpro, tmp_path):
    import json

    from huggingface_hub import ModelCard
    from tests_helpers import fine_tune

    from cdsbias.cli import main as cli

    plain = fine_tune(tmp_path / "plain", becpro, base, "max_steps=2")
    zero = fine_tune(tmp_path / "zero", becpro, base, "max_steps=2", "equalizing_loss_weight=0")
    # lambda = 0 adds nothing: every evaluated number equals plain full fine-tuning's.
    assert (zero / "bias_metrics.jsonl").read_text() == (plain / "bias_metrics.jsonl").read_text()
    run = fine_tune(tmp_path / "run", becpro, base, "max_steps=2", "logging_steps=1",
                    "equalizing_loss_weight=1.0")  # fmt: skip
    history = json.loads((run / "trainer_state.json").read_text())["log_history"]
    terms = [entry["debias/equalizing"] for entry in history if "debias/equalizing" in entry]
    assert len(terms) == 2 and all(t > 0 for t in terms)
    info = json.loads((run / "run_info.json").read_text())["method"]
    assert info["methods"] == ["full", "equalizing_loss"]
    assert info["label"] == "full fine-tuning + equalizing loss (lambda 1)"
    out = tmp_path / "published"
    assert cli(["publish", str(run / "checkpoint-2"), "--repo-id", "org/eq", "--dry-run",
                "--out", str(out)]) == 0  # fmt: skip
    card = ModelCard.load(out / "README.md")
    assert "Qian, Y., Muaz, U." in card.text and "equalizing-loss" in card.data.tags
    assert "- **gender-equalizing loss**: a gender-equalizing loss term" in card.text


# ------------------------------------------------------------------ commands on the pages
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def documented_commands() -> list[tuple[str, list[str]]]:
    """``(page:line, words)`` for every command in a ```bash block of the pages: lines ending
    in a backslash joined to the next, comments and leading ``VAR=value`` assignments dropped,
    ``.venv/bin/`` taken off the program."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        in_block, pending, start = False, "", 0
        for number, line in enumerate(lines, 1):
            if line.startswith("```"):
                in_block = line.strip() == "```bash" if not in_block else False
                continue
            if not in_block:
                continue
            if not pending:
                start = number
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            words = shlex.split(pending + line, comments=True)
            pending = ""
            while words and ENV_ASSIGNMENT.match(words[0]):
                words.pop(0)
            if words:
                words[0] = words[0].removeprefix(".venv/bin/")
                found.append((f"{page.relative_to(REPO)}:{start}", words))
    return found


COMMANDS = documented_commands()


def makefile_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, re.M))


def check_train_command(words: list[str], here: Path) -> None:
    """``[accelerate launch [--config_file F]] train.py RECIPE key=value ...``: the config
    exists and the recipe loads with the overrides (keys, types and conflicts checked) in
    ``here``, where a one-document stand-in is written for each file ``data_files`` names
    (the reader's own corpus)."""
    from cdsbias.train.config import load_recipe

    if words[:2] == ["accelerate", "launch"]:
        words = words[2:]
        if words[0] == "--config_file":
            assert (REPO / words[1]).is_file(), f"no launch config {words[1]}"
            words = words[2:]
    assert words[0] == "train.py", f"not a train.py command: {words}"
    for override in words[2:]:
        if override.startswith("data_files="):
            stand_in = here / override.removeprefix("data_files=").replace("*", "a")
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.write_text('{"text": "She is a nurse.", "body": "She is a nurse."}\n')
    load_recipe(REPO / words[1], words[2:])


def check_command(words: list[str], here: Path) -> None:
    program, args = words[0], words[1:]
    if program == "make":
        targets = [a for a in args if not a.startswith("-")]
        assert set(targets) <= makefile_targets(), f"no Makefile target {targets}"
    elif program == "cdsbias" or words[:3] == ["python", "-m", "cdsbias"]:
        from cdsbias.cli import build_parser

        argv = args if program == "cdsbias" else words[3:]
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"cdsbias {' '.join(argv)}: the parser refuses it (exit {exc.code})")
    elif program == "accelerate" or args[:1] == ["train.py"]:
        check_train_command(words if program == "accelerate" else args, here)
    elif program == "python" and args[0].startswith("scripts/"):
        assert (REPO / args[0]).is_file(), f"no script {args[0]}"
    elif program == "pip":
        assert args[0] == "install"
    else:
        pytest.fail(f"no check for a `{program}` command: add one to tests/test_docs.py")


def test_the_pages_hold_commands():
    pages = {where.split(":")[0] for where, _ in COMMANDS}
    expected = ["README.md", "docs/recipes.md", "docs/method_keys.md", "docs/scoring.md"]
    assert set(expected) <= pages


def test_python_blocks_on_the_pages_compile():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text[: block.start()].count("\n") + 2
            compile(block.group(1), f"{page.relative_to(REPO)}:{line}", "exec")


def test_scoring_page_python_example_runs(real_vocab_bert, capsys):
    """docs/scoring.md's Python example as written, on a random BERT with bert-base-uncased's
    vocabulary in place of the hub model, and 200 bootstrap resamples in place of 2,000."""
    text = (REPO / "docs" / "scoring.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert '"bert-base-uncased"' in code and "n_resamples=2000" in code
    code = code.replace('"bert-base-uncased"', repr(str(real_vocab_bert)))
    namespace: dict = {}
    exec(compile(code.replace("n_resamples=2000", "n_resamples=200"), "docs/scoring.md", "exec"),
         namespace)  # fmt: skip
    assert "gap_male" in namespace["result"].metrics
    assert "verdict" in capsys.readouterr().out.lower()


def test_the_front_page_links_every_docs_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in PAGES[1:] if f"](docs/{p.name})" not in readme]
    assert not unlinked, f"README.md's documentation table lacks {unlinked}"


@pytest.mark.filterwarnings("error")  # a documented command that warns needs a fix
@pytest.mark.parametrize("words", [w for _, w in COMMANDS], ids=[where for where, _ in COMMANDS])
def test_documented_command_is_accepted(words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check_command(words, tmp_path)
