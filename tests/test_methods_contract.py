"""One contract over every registered debiasing method (as tests/test_benchmarks.py is for
benchmarks): a tiny model trains 3 steps with the method's example keys; the saved run loads
through ``cdsbias evaluate`` and scores exactly what the training callback scored; ``publish
--dry-run`` writes a card that ``ModelCard.load`` reads, whose loading code runs and gives the
checkpoint's scores; ``compare`` shows the method's label and trainable count; the card cites
the method and names no method that did not act. A method that reads the bias axis
(``reads_axis``) runs the contract on gender, race, religion and a user's TSV axis, and
on CrowS-Pairs' other categories (age, disability, ...; CDS off where the axis has no
counterfactuals), on a corpus that names each axis's groups. Plus: no method name outside
``cdsbias/methods/``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import torch
from huggingface_hub import ModelCard
from test_methods_training import evaluate_matches_callback
from test_publish_adapters import mask_log_probs, run_card_code
from tests_helpers import SMOKE, fine_tune, overrides
from tiny_models import tiny_masked_lm

from cdsbias.axes import get_axis
from cdsbias.cli import main as cli
from cdsbias.errors import CdsbiasError
from cdsbias.methods import REGISTRY, get_method, list_methods, load_all, plan_from_values
from cdsbias.runs.folder import RUN_INFO_FILE
from cdsbias.scoring import load_masked_lm

REPO = Path(__file__).resolve().parents[1]
HUB_BASE = "org/tiny-bert"
STEPS = 3
load_all()
NAMES = sorted(REGISTRY)
pytestmark = [
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
    pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning"),
    pytest.mark.usefixtures("one_thread"),
]


@pytest.fixture(scope="module")
def hub_base(tmp_path_factory) -> Path:
    """A local base that names its hub origin, as a folder saved from a hub model does."""
    folder = tiny_masked_lm("bert", tmp_path_factory.mktemp("base") / "bert")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "_name_or_path": HUB_BASE}))
    return folder


#: Axes besides gender that every method reading the axis runs on ("user": a user's TSV).
AXES = ("race", "religion", "user")
#: CrowS-Pairs' other categories (cdsbias.axes): in the default set each runs with one
#: method reading the axis, in turn, so that every axis and every such method is covered;
#: the rest of the product is slow.
GROUP_AXES = ("age", "disability", "nationality", "physical_appearance",
              "sexual_orientation", "socioeconomic")  # fmt: skip
#: bias-bench's own word lists (axis variants, cdsbias.axes.bias_bench): the same, in turn.
VARIANT_AXES = ("gender@bias-bench", "race@bias-bench", "religion@bias-bench")
_IN_TURN = (*GROUP_AXES, *VARIANT_AXES)
_AXIS_READERS = [name for name in NAMES if REGISTRY[name].reads_axis]
_TURNS = {(_AXIS_READERS[i % len(_AXIS_READERS)], axis) for i, axis in enumerate(_IN_TURN)}
RUNS = [
    pytest.param(
        (name, axis),
        id=f"{name}-{axis}",
        marks=pytest.mark.slow if axis in _IN_TURN and (name, axis) not in _TURNS else (),
    )
    for name, axis in (
        [(name, "gender") for name in NAMES]
        + [(name, axis) for name in _AXIS_READERS for axis in (*AXES, *_IN_TURN)]
    )
]
#: Example keys that name gender word files: on another axis the axis's words replace them.
GENDER_WORD_KEYS = ("posthoc_word_pairs", "context_debias_attribute_words")


def axis_run_keys(axis: str, folder: Path) -> list[str]:
    """Recipe keys of a run on ``axis``: the axis, and a JSON-lines corpus whose sentences
    name each group's words alone (with BEC-Pro professions, Context-Debias's stereotype
    words) and sentences that name none."""
    from cdsbias.axes import get_axis

    reference = axis
    if axis == "user":
        reference = str(folder / "age.tsv")
        (folder / "age.tsv").write_text(
            "young\tmiddle\told\nyoung\tmiddle-aged\told\nteens\tadults\televated\n"
        )
    groups = get_axis(reference)
    jobs = ["nurse", "clerk", "judge", "mason", "roofer", "secretary"]
    documents = []
    for index, job in enumerate(jobs):
        sentences = [f"The {job} met a friend at the school on day {index}."]
        for group in range(groups.k):
            for word in sorted(groups.words(group)):
                sentences.append(f"The {word} family met the {job} at the school today.")
        documents += [" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3)]
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents))
    return ["dataset=json", f"data_files={corpus}", f"bias_axis={reference}"]


@pytest.fixture(scope="module", params=RUNS)
def method_run(request, tmp_path_factory, becpro, hub_base) -> tuple[str, Path]:
    """A 3-step smoke run of the method's example keys (CDS p=1.0, as the smoke recipe),
    on its axis."""
    name, axis = request.param
    example = dict(get_method(name).example)
    folder = tmp_path_factory.mktemp(f"{name}-{axis}")
    extra = []
    if axis != "gender":
        for key in GENDER_WORD_KEYS:
            example.pop(key, None)
        extra = axis_run_keys(axis, folder)
        if name == "self_debiasing" and axis == "user":  # a user's axis has no prefix
            example["self_debias_prefix"] = "The following text discriminates by age: "
        if axis in GROUP_AXES and get_axis(axis).cds_refused:  # no CDS on such an axis
            extra.append("cds_mode=none")
    keys = [f"{k}={json.dumps(v)}" for k, v in example.items()]
    keys += [*extra, f"max_steps={STEPS}", f"save_steps={STEPS}"]
    out = folder / "run"
    if axis == "gender":
        fine_tune(out, becpro, hub_base, *keys)
    else:  # fine_tune's keys, less the generated corpus's size (the corpus is a file here)
        from cdsbias.train.config import load_recipe
        from cdsbias.train.run import run

        given = overrides(out, becpro, "init_from_scratch=false",
                          f"model_name_or_path={hub_base}", *keys)  # fmt: skip
        run(load_recipe(SMOKE, [k for k in given if not k.startswith("occupation_sentences=")]))
    return name, out


def test_the_registry_has_the_methods_of_every_role():
    assert {"full", "partial", "lora", "adapter", "dropout"} <= set(NAMES)
    assert set(list_methods()) == set(NAMES)
    for name in NAMES:
        cls = REGISTRY[name]
        assert cls.name == name and cls.title and cls.description and cls.selected_by
        plan = plan_from_values(cls.example)
        assert name in plan.names, f"{name}'s example keys do not select it"


def test_an_unknown_method_says_what_was_meant():
    with pytest.raises(
        CdsbiasError, match=r"Unknown debiasing method 'lorra'\. Did you mean 'lora'"
    ):
        get_method("lorra")


def test_saved_run_scores_what_the_callback_scored(method_run, becpro, tmp_path):
    # Same batch size as the callback: padding never changes a score, but float32 sums
    # over differently shaped batches may differ in the last bit.
    _, run = method_run
    evaluate_matches_callback(run / f"checkpoint-{STEPS}", becpro, tmp_path)


def test_published_card_loads_cites_the_method_and_its_code_runs(
    method_run, hub_base, tmp_path, monkeypatch
):
    name, run = method_run
    plan = plan_from_values(get_method(name).example)
    # A post-hoc method acts after training, on the run folder's model; a checkpoint holds
    # what training saved before it acted (its card does not name it).
    checkpoint = run if plan.posthoc is not None else run / f"checkpoint-{STEPS}"
    out = tmp_path / "published"
    assert cli(["publish", str(checkpoint), "--repo-id", "org/debiased", "--dry-run",
                "--out", str(out)]) == 0  # fmt: skip
    card = ModelCard.load(out / "README.md")
    acted = plan.methods
    for method in acted:
        assert f"- **{method.title}**:" in card.text
        if method.citation:
            assert method.citation in card.text
        assert set(method.card_tags) <= set(card.data.tags)
    others = [REGISTRY[n] for n in NAMES if n not in {m.name for m in acted}]
    for other in others:
        assert f"- **{other.title}**:" not in card.text, f"{other.name} did not act"
    # The smoke runs substitute (CDS), so nothing cites the augmentation/dropout paper
    # unless dropout acted.
    if "dropout" not in {m.name for m in acted}:
        assert "Webster" not in card.text.split("## Citation")[1]
    reference, tokenizer = load_masked_lm(checkpoint, progress=False)
    expected = mask_log_probs(reference, tokenizer)
    model, tokenizer = run_card_code(
        card.text, {HUB_BASE: hub_base, "org/debiased": out}, tmp_path / "hub", monkeypatch
    )
    assert torch.allclose(mask_log_probs(model.eval(), tokenizer), expected, atol=1e-5)


def test_a_fit_records_its_axis(method_run):
    """A post-hoc fit records the axis it was fitted on (``BiasAxis.record()``), and the
    run's recipe names it."""
    import yaml

    from cdsbias.axes import get_axis
    from cdsbias.methods.erasure import ERASURE_RECORD

    _, run = method_run
    recipe = yaml.safe_load((run / "recipe.yaml").read_text())
    axis = get_axis(recipe["bias_axis"])
    if (run / ERASURE_RECORD).is_file():
        record = json.loads((run / ERASURE_RECORD).read_text())
        assert record["details"]["bias_axis"] == axis.record()
        assert record["details"]["word_pairs"]["pairs"] > 0


def test_compare_shows_the_label_and_trainable_count(method_run, tmp_path, capsys):
    name, run = method_run
    assert cli(["compare", str(run), "--out", str(tmp_path / "compare")]) == 0
    recorded = json.loads((run / RUN_INFO_FILE).read_text())["method"]
    table = (tmp_path / "compare" / "comparison.md").read_text()
    import yaml

    from cdsbias.axes import get_axis

    axis = get_axis(yaml.safe_load((run / "recipe.yaml").read_text())["bias_axis"]).name
    # The corpus treatment names an axis other than gender (cdsbias.cds.treatment); an
    # axis without counterfactuals trains on the original text.
    treatment = "CDS p=1.0" if axis == "gender" else f"CDS p=1.0 ({axis})"
    if get_axis(axis).cds_refused:
        treatment = "original text"
    assert f"| {recorded['label']} · {treatment} |" in table
    assert f"{recorded['trainable_parameters']:,}" in table
    assert name in recorded["methods"]
    csv = pd.read_csv(tmp_path / "compare" / "comparison.csv")
    assert name in csv["methods"].iloc[0].split("+")


# ------------------------------------------------------------------ one owner per name
# (cdsbias/cds is left out: "full" there is a kind of name, "John Smith", not a method.)
OUTSIDE = ["cdsbias/train", "cdsbias/scoring", "cdsbias/runs", "cdsbias/commands",
           "cdsbias/benchmarks", "cdsbias/data", "train.py"]  # fmt: skip


def test_no_method_name_outside_the_methods_package():
    # Registry names as code spells them (quoted), display names and their libraries as
    # prose does. Recipe keys that merely start with a name (lora_r) are not names.
    quoted = "|".join(re.escape(n) for n in NAMES)
    display = r"LoRA|peft|PeftModel|bottleneck|Bottleneck|ADELE|dropout_overrides"
    pattern = re.compile(rf"""(["'](?:{quoted})["'])|\b({display})\b""")
    hits = []
    for place in OUTSIDE:
        path = REPO / place
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{file.relative_to(REPO)}:{number}: {line.strip()}")
    assert not hits, "method names outside cdsbias/methods/:\n" + "\n".join(hits)
