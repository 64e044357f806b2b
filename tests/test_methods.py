"""Parameter-efficient and dropout debiasing, unit by unit, on tiny models of every architecture:
recipe keys and their errors, partial fine-tuning globs (tied weights), LoRA default targets,
bottleneck adapters (identity at start, save/load), dropout overrides, adapter loading."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
import torch
from tiny_models import ARCHITECTURES

from cdsbias.errors import CdsbiasError
from cdsbias.methods import plan_from_values
from cdsbias.methods.bottleneck import (
    CONFIG_FILE,
    BottleneckConfig,
    adapters,
    add_bottleneck_adapters,
    load_bottleneck,
    save_bottleneck,
)
from cdsbias.methods.dropout import Dropout, DropoutOptions
from cdsbias.methods.lora import DEFAULT_LORA_TARGETS
from cdsbias.methods.partial import freeze_except
from cdsbias.runs.card_recipe import card_recipe
from cdsbias.scoring import MaskedLMScorer, load_masked_lm
from cdsbias.train.config import load_recipe

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "recipes" / "smoke.yaml"
# No sentence-initial slot: cased and uncased models read the same words.
SENTENCES = [
    "He says [MASK] is a nurse.",
    "My [MASK] works as a roofer.",
    "This [MASK] is a taper.",
]
# Tiny models gain nothing from intra-op threads on a busy 2-core machine.
pytestmark = pytest.mark.usefixtures("one_thread")
TARGETS = ["she", "brother", "woman"]


def apply_method(model, values):
    """Prepares ``model`` with the plan of recipe ``values``: (model, run_info summary)."""
    plan = plan_from_values(values)
    model = plan.prepare(model)
    return model, plan.summary(model)


def dropout_overrides(model_type, **options):
    return Dropout(DropoutOptions(**options)).config_overrides(model_type)


def scores(model, tokenizer) -> torch.Tensor:
    scorer = MaskedLMScorer(model, tokenizer, batch_size=8)
    return torch.tensor(scorer.target_log_probs(SENTENCES, TARGETS), dtype=torch.float64)


# ------------------------------------------------------------------ recipe keys
def test_method_keys_default_to_full_fine_tuning():
    recipe = load_recipe(SMOKE)
    assert recipe.method.names == ["full"]
    effective = recipe.effective()
    assert effective["peft_method"] == "none" and effective["lora_r"] == 8
    assert effective["adapter_reduction_factor"] == 16
    assert effective["hidden_dropout_prob"] is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["peft_method=lorra"], "'peft_method' must be one of none, lora, adapter.*'lora'"),
        (["lora_r=4"], r"lora_r applies only to peft_method: lora \(LoRA\)"),
        (["adapter_reduction_factor=8"], "applies only to peft_method: adapter"),
        (["peft_method=lora"], "init_from_scratch builds a random one"),
        (
            [
                "peft_method=adapter",
                "init_from_scratch=false",
                "model_name_or_path=m",
                "trainable_parameters=[cls.*]",
            ],
            "Remove one of them",
        ),
        (["hidden_dropout_prob=1.5"], r"hidden_dropout_prob must be in \[0, 1\)"),
        (
            ["lora_r=0", "peft_method=lora", "init_from_scratch=false", "model_name_or_path=m"],
            "lora_r must be at least 1",
        ),
        (["adapter_non_linearity=relux"], "must be one of relu, gelu, tanh, silu"),
        (["trainable_parameters=[cls.*, !cls.predictions.bias]"], "quote patterns that start"),
    ],
)
def test_bad_method_keys_fail_at_load_time(overrides, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from-scratch keys of the smoke recipe
        with pytest.raises(CdsbiasError, match=message):
            load_recipe(SMOKE, overrides)


def test_card_keeps_only_the_keys_of_the_method_used():
    lora = {"peft_method": "lora", "lora_r": 8, "adapter_reduction_factor": 16}
    assert card_recipe(lora) == {"peft_method": "lora", "lora_r": 8}
    full = {"peft_method": "none", "lora_r": 8, "hidden_dropout_prob": 0.2}
    assert card_recipe(full) == {"peft_method": "none", "hidden_dropout_prob": 0.2}


# ------------------------------------------------------------------ partial fine-tuning
def test_partial_fine_tuning_trains_only_what_the_globs_name(zoo):
    model, _ = load_masked_lm(zoo["bert"], progress=False)
    cfg = {"trainable_parameters": ["bert.encoder.layer.1.*", "cls.predictions.transform.*"]}
    model, summary = apply_method(model, cfg)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(
        n.startswith(("bert.encoder.layer.1.", "cls.predictions.transform.")) for n in trainable
    )
    assert "bert.encoder.layer.1.output.dense.weight" in trainable
    assert not model.bert.embeddings.word_embeddings.weight.requires_grad
    assert summary["label"] == (
        "partial fine-tuning (bert.encoder.layer.1.*, cls.predictions.transform.*)"
    )
    assert summary["trainable_parameters"] == sum(
        p.numel() for p in model.parameters() if p.requires_grad
    )
    assert summary["total_parameters"] == sum(p.numel() for p in model.parameters())
    assert 0 < summary["trainable_share"] < 1 and summary["methods"] == ["partial"]


def test_a_tied_tensor_trains_under_any_of_its_names_unless_excluded(zoo):
    model, _ = load_masked_lm(zoo["bert"], progress=False)
    embeddings = model.bert.embeddings.word_embeddings.weight
    assert model.cls.predictions.decoder.weight is embeddings  # tied: one tensor, two names
    with pytest.warns(UserWarning, match="word_embeddings.weight \\(tied to cls.predictions"):
        freeze_except(model, ["cls.*"])
    assert embeddings.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # excluded: no tied tensor trains unasked
        freeze_except(model, ["cls.*", "!cls.predictions.decoder.weight"])
    assert not embeddings.requires_grad
    assert model.cls.predictions.transform.dense.weight.requires_grad


def test_a_glob_that_matches_nothing_names_real_parameters(zoo):
    model, _ = load_masked_lm(zoo["bert"], progress=False)
    with pytest.raises(CdsbiasError, match=r"'bert.encoder.layer.12.\*' matches no parameter of "
                       r"this bert model; real names: bert.encoder.layer.1"):  # fmt: skip
        freeze_except(model, ["bert.encoder.layer.12.*"])
    with pytest.raises(CdsbiasError, match="leave no parameter to train"):
        freeze_except(model, ["cls.*", "!cls.*"])


# ------------------------------------------------------------------ LoRA
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_lora_default_targets_of_every_architecture(zoo, arch):
    model, _ = load_masked_lm(zoo[arch], progress=False)
    model, summary = apply_method(model, {"peft_method": "lora"})
    assert type(model).__name__ == "PeftModel"
    targets = DEFAULT_LORA_TARGETS[model.config.model_type]
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all(".lora_A." in n or ".lora_B." in n for n in trainable)
    assert {t for t in targets if any(f".{t}.lora_" in n for n in trainable)} == set(targets)
    assert summary["label"] == f"LoRA r=8 ({', '.join(sorted(targets))})"
    assert summary["methods"] == ["lora"] and 0 < summary["trainable_share"] < 0.2
    # The adapter names its base by an absolute path, loadable from any folder.
    assert model.peft_config["default"].base_model_name_or_path == str(zoo[arch].resolve())


def test_lora_on_modules_that_do_not_exist_lists_the_layers(zoo):
    model, _ = load_masked_lm(zoo["bert"], progress=False)
    with pytest.raises(CdsbiasError, match="'qury' names no layer of this bert model; choose "
                       "from its linear layers: decoder, dense, key, query, value"):  # fmt: skip
        apply_method(model, {"peft_method": "lora", "lora_target_modules": ["qury"]})
    with pytest.raises(CdsbiasError, match="'output' names no layer"):  # a block, not a layer
        apply_method(model, {"peft_method": "lora", "lora_target_modules": ["output"]})


def test_unknown_architecture_for_lora_and_adapters():
    from transformers import MPNetConfig, MPNetForMaskedLM

    config = MPNetConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1,
                         num_attention_heads=2, intermediate_size=32)  # fmt: skip
    with pytest.raises(CdsbiasError, match=r"no default for model_type 'mpnet'; set it to some "
                       r"of its linear layers: .*q, v"):  # fmt: skip
        apply_method(MPNetForMaskedLM(config), {"peft_method": "lora"})
    with pytest.raises(CdsbiasError, match="do not know where to sit in model_type 'mpnet'"):
        apply_method(MPNetForMaskedLM(config), {"peft_method": "adapter"})


# ------------------------------------------------------------------ bottleneck adapters
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_bottleneck_adapter_starts_as_its_base_model(zoo, arch):
    model, tokenizer = load_masked_lm(zoo[arch], progress=False)
    before = scores(model, tokenizer)
    model, summary = apply_method(model, {"peft_method": "adapter"})
    assert torch.allclose(scores(model, tokenizer), before, atol=1e-6, rtol=0)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all(".bottleneck." in n for n in trainable)
    # One adapter per layer (ALBERT shares its one layer across depth, and its adapter).
    assert len(adapters(model)) == (1 if arch == "albert" else 2)
    assert summary["label"] == "bottleneck adapter (reduction 16)"
    assert summary["trainable_parameters"] == sum(
        p.numel() for a in adapters(model).values() for p in a.parameters()
    )


def perturb(model) -> None:
    """Moves every adapter away from identity, as training would."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for adapter in adapters(model).values():
            for param in adapter.parameters():
                param.add_(torch.randn(param.shape, generator=generator) * 0.5)


@pytest.mark.parametrize("arch", ["bert", "distilbert", "albert", "modernbert"])
def test_bottleneck_save_and_load_round_trip(zoo, arch, tmp_path):
    model, tokenizer = load_masked_lm(zoo[arch], progress=False)
    base = scores(model, tokenizer)
    add_bottleneck_adapters(model, reduction_factor=4, base_model_name_or_path=str(zoo[arch]))
    perturb(model)
    trained = scores(model, tokenizer)
    assert not torch.allclose(trained, base, atol=1e-4)
    folder = save_bottleneck(model, tmp_path / "adapter")
    assert sorted(p.name for p in folder.iterdir()) == [
        "bottleneck_adapter.safetensors",
        CONFIG_FILE,
    ]
    config = BottleneckConfig.load(folder)
    assert (config.model_type, config.reduction_factor, config.non_linearity) == (
        model.config.model_type, 4, "relu",
    )  # fmt: skip
    # The loading snippet of docs/method_keys.md and the module docstring.
    fresh, _ = load_masked_lm(config.base_model_name_or_path, progress=False)
    assert torch.equal(scores(load_bottleneck(fresh, folder).eval(), tokenizer), trained)
    # load_masked_lm reads the base from the adapter's config (and its tokenizer).
    loaded, loaded_tokenizer = load_masked_lm(folder, progress=False)
    assert torch.equal(scores(loaded, loaded_tokenizer), trained)


def test_bottleneck_errors(zoo, tmp_path):
    model, _ = load_masked_lm(zoo["bert"], progress=False)
    add_bottleneck_adapters(model, base_model_name_or_path=str(tmp_path / "gone"))
    folder = save_bottleneck(model, tmp_path / "adapter")
    with pytest.raises(CdsbiasError, match="already has bottleneck adapters"):
        add_bottleneck_adapters(model)
    distil, _ = load_masked_lm(zoo["distilbert"], progress=False)
    with pytest.raises(CdsbiasError, match="trained on a bert model of hidden size 32, not on "
                       "this distilbert"):  # fmt: skip
        load_bottleneck(distil, folder)
    with pytest.raises(CdsbiasError) as missing:
        load_masked_lm(folder, progress=False)
    message = str(missing.value)
    assert "\n" not in message
    assert f"needs its base model '{tmp_path / 'gone'}'" in message
    assert "does not exist" in message


# ------------------------------------------------------------------ LoRA adapter folders
@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")  # peft's
def test_lora_folder_loads_with_its_base_and_tokenizer(zoo, tmp_path):
    model, tokenizer = load_masked_lm(zoo["roberta"], progress=False)
    model, _ = apply_method(model, {"peft_method": "lora"})
    with torch.no_grad():
        for name, param in model.named_parameters():
            if ".lora_B." in name:
                param.normal_(std=0.5)  # a trained adapter (B starts at zero)
    model.eval()
    trained = scores(model.get_base_model(), tokenizer)
    folder = tmp_path / "lora"
    model.save_pretrained(folder)
    assert {"adapter_config.json", "adapter_model.safetensors"} <= {
        p.name for p in folder.iterdir()
    }
    loaded, loaded_tokenizer = load_masked_lm(folder, progress=False)
    assert torch.equal(scores(loaded, loaded_tokenizer), trained)
    # docs/method_keys.md's snippet: peft on a plain transformers model.
    from peft import PeftModel
    from transformers import AutoModelForMaskedLM

    plain = PeftModel.from_pretrained(AutoModelForMaskedLM.from_pretrained(zoo["roberta"]), folder)
    assert torch.equal(scores(plain.get_base_model().eval(), tokenizer), trained)
    tokenizer.save_pretrained(folder)  # a folder's own tokenizer wins over the base's
    assert load_masked_lm(folder, progress=False)[1].name_or_path == str(folder)

    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    settings = json.loads((moved / "adapter_config.json").read_text())
    settings["base_model_name_or_path"] = str(tmp_path / "no-base")
    (moved / "adapter_config.json").write_text(json.dumps(settings))
    expected = r"The adapter in '.*moved' needs its base model '.*no-base' \(base_model_name_or"
    with pytest.raises(CdsbiasError, match=expected):
        load_masked_lm(moved, progress=False)


# ------------------------------------------------------------------ dropout
def test_dropout_keys_map_to_each_family():
    cfg = {"hidden_dropout_prob": 0.2, "attention_probs_dropout_prob": 0.15}
    assert dropout_overrides("bert", **cfg) == {
        "hidden_dropout_prob": 0.2, "attention_probs_dropout_prob": 0.15,
    }  # fmt: skip
    assert dropout_overrides("distilbert", **cfg) == {"dropout": 0.2, "attention_dropout": 0.15}
    assert dropout_overrides("modernbert", **cfg) == {
        "embedding_dropout": 0.2, "mlp_dropout": 0.2, "attention_dropout": 0.15,
    }  # fmt: skip
    assert dropout_overrides("roberta", hidden_dropout_prob=0.3) == {"hidden_dropout_prob": 0.3}
    assert dropout_overrides("bert") == {}


@pytest.mark.parametrize("arch", ["bert", "distilbert", "modernbert", "deberta-v2"])
def test_dropout_keys_reach_the_model_config(zoo, arch):
    from cdsbias.train.run import build_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from-scratch keys of the smoke recipe
        recipe = load_recipe(SMOKE, [
            "init_from_scratch=false", f"model_name_or_path={zoo[arch]}",
            "hidden_dropout_prob=0.2", "attention_probs_dropout_prob=0.15",
        ])  # fmt: skip
    model, _ = build_model(recipe)
    config = model.config
    for key, value in recipe.method.config_overrides(config.model_type).items():
        assert getattr(config, key) == value
    summary = recipe.method.summary(model)
    assert summary["label"] == "full fine-tuning + dropout 0.20/0.15"
    assert summary["options"]["dropout"] == {
        "hidden_dropout_prob": 0.2, "attention_probs_dropout_prob": 0.15,
    }  # fmt: skip
    dropouts = [m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    assert 0.2 in dropouts


def test_dropout_keys_reach_a_model_built_from_scratch():
    from cdsbias.train.run import build_model

    overrides = ["dataset=occupations", "max_documents=null", "occupation_sentences=50"]
    overrides.append("hidden_dropout_prob=0.3")
    model, _ = build_model(load_recipe(SMOKE, overrides))
    assert model.config.hidden_dropout_prob == 0.3
    assert model.config.attention_probs_dropout_prob == 0.1  # not set: BERT's own


def test_config_overrides_a_model_does_not_have_are_an_error(zoo):
    with pytest.raises(CdsbiasError, match="model_type 'bert'\\) has no setting dropout"):
        load_masked_lm(zoo["bert"], progress=False, config_overrides={"dropout": 0.2})
    model, _ = load_masked_lm(
        zoo["bert"], progress=False, config_overrides={"hidden_dropout_prob": 0.25}
    )
    assert model.config.hidden_dropout_prob == 0.25


@pytest.mark.parametrize(
    ("name", "method", "cds_mode"),
    [
        ("gap_cds_last_layer", {"trainable_parameters": ["bert.encoder.layer.11.*", "cls.*",
                                "!cls.predictions.decoder.weight"]}, "cds"),
        ("gap_cds_lora", {"peft_method": "lora", "lora_r": 8,
                          "lora_target_modules": ["query", "value"]}, "cds"),
        ("gap_cda_adapter", {"peft_method": "adapter", "adapter_reduction_factor": 16}, "cda"),
        ("gap_dropout", {"hidden_dropout_prob": 0.2, "attention_probs_dropout_prob": 0.15}, "none"),
    ],
)  # fmt: skip
def test_method_recipes(name, method, cds_mode):
    recipe = load_recipe(REPO / "recipes" / f"{name}.yaml")
    effective = recipe.effective()
    assert {key: effective[key] for key in method} == method
    assert recipe.cds.cds_mode == cds_mode
    assert recipe.model.model_name_or_path == "bert-base-uncased"
