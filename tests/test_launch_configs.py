"""recipes/accelerate/*.yaml: read by accelerate's own loader and launcher, as `accelerate launch`
reads them, and each plugin section turned into the plugin accelerate would build."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted((REPO / "recipes" / "accelerate").glob("*.yaml"))

# What each config is for: distributed type, mixed precision, processes. A new config needs a
# line here and a row in the README's launch-config table (which says what it was run on).
EXPECTED = {
    "single_gpu": ("NO", "no", 1),
    "multi_gpu": ("MULTI_GPU", "no", 2),
    "fsdp": ("FSDP", "bf16", 2),
    "deepspeed_zero2": ("DEEPSPEED", "bf16", 2),
}


def launch_args(path: Path):
    """accelerate's own `accelerate launch --config_file PATH train.py ...` argument handling."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    parsed = launch_command_parser().parse_args(
        ["--config_file", str(path), "train.py", "recipes/smoke.yaml"]
    )
    args, config, _ = _validate_launch_command(parsed)
    return args, config


def test_every_config_has_an_expectation():
    assert sorted(p.stem for p in CONFIGS) == sorted(EXPECTED)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_opens_with_its_launch_command(path):
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    command = f"accelerate launch --config_file recipes/accelerate/{path.name} train.py recipes/"
    assert any(command in line for line in header), f"{path.name}: no `{command}...` header"


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_accelerate_loads_config_as_intended(path):
    from accelerate.commands.config.config_args import ClusterConfig, load_config_from_file
    from accelerate.utils import ComputeEnvironment, DistributedType, PrecisionType

    config = load_config_from_file(str(path))  # raises on keys ClusterConfig does not know
    assert isinstance(config, ClusterConfig)
    assert config.compute_environment == ComputeEnvironment.LOCAL_MACHINE
    distributed, precision, processes = EXPECTED[path.stem]
    assert config.distributed_type == DistributedType(distributed)
    assert PrecisionType(config.mixed_precision) == PrecisionType(precision)
    assert (config.num_processes, config.num_machines, config.machine_rank) == (processes, 1, 0)
    # Only the section of the config's own distributed type is filled in.
    sections = {"FSDP": config.fsdp_config, "DEEPSPEED": config.deepspeed_config}
    for kind, section in sections.items():
        assert bool(section) == (kind == distributed), f"{path.name}: {kind} section"
    assert not (config.megatron_lm_config or config.fp8_config or config.parallelism_config)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_plugin_keys_are_launcher_options(path):
    """`accelerate launch` copies each plugin key onto its argument namespace without checking
    it (fsdp_config keys get an `fsdp_` prefix); a misspelt key would be ignored silently."""
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.commands.launch import launch_command_parser

    config = load_config_from_file(str(path))
    options = {a.dest: a for a in launch_command_parser()._actions}
    pairs = [(k if k.startswith("fsdp") else f"fsdp_{k}", v) for k, v in config.fsdp_config.items()]
    pairs += list(config.deepspeed_config.items())
    for key, value in pairs:
        assert key in options, f"{path.name}: {key} is not an `accelerate launch` option"
        if options[key].choices is not None:
            assert str(value) in options[key].choices, f"{path.name}: {key}={value}"


@pytest.mark.parametrize(
    "name", ["single_gpu", "multi_gpu", "fsdp"], ids=["single_gpu", "multi_gpu", "fsdp"]
)
def test_launcher_builds_the_process_environment(name):
    """accelerate's launcher validates the config and builds the processes' environment."""
    from accelerate.utils.launch import prepare_multi_gpu_env, prepare_simple_launcher_cmd_env

    args, _ = launch_args(REPO / "recipes" / "accelerate" / f"{name}.yaml")
    distributed, precision, processes = EXPECTED[name]
    assert (args.multi_gpu, args.use_fsdp, args.use_deepspeed) == (
        distributed == "MULTI_GPU", distributed == "FSDP", False,
    )  # fmt: skip
    assert args.num_processes == processes
    if processes == 1:
        command, env = prepare_simple_launcher_cmd_env(args)
        assert command[-2:] == ["train.py", "recipes/smoke.yaml"]
    else:
        env = prepare_multi_gpu_env(args)
        assert args.nproc_per_node == str(processes)
    assert env["ACCELERATE_MIXED_PRECISION"] == precision
    assert env.get("ACCELERATE_USE_FSDP", "false") == str(distributed == "FSDP").lower()


def test_fsdp_config_builds_accelerates_plugin_for_bert(monkeypatch):
    """The environment the launcher gives each process builds accelerate's FSDP plugin, and its
    wrap policy finds the layer class it names in a BERT masked LM."""
    from accelerate.utils import FullyShardedDataParallelPlugin
    from accelerate.utils.launch import prepare_multi_gpu_env
    from transformers import BertConfig, BertForMaskedLM

    args, config = launch_args(REPO / "recipes" / "accelerate" / "fsdp.yaml")
    for key, value in prepare_multi_gpu_env(args).items():
        if key.startswith(("FSDP_", "ACCELERATE_")):
            monkeypatch.setenv(key, value)
    plugin = FullyShardedDataParallelPlugin()
    assert plugin.fsdp_version == config.fsdp_config["fsdp_version"] == 2
    assert plugin.state_dict_type.name == config.fsdp_config["fsdp_state_dict_type"]
    assert plugin.transformer_cls_names_to_wrap == ["BertLayer"]
    assert plugin.cpu_ram_efficient_loading and plugin.reshard_after_forward
    model = BertForMaskedLM(
        BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                   intermediate_size=8)
    )  # fmt: skip
    plugin.set_auto_wrap_policy(model)  # raises when no module class is called BertLayer
    assert plugin.auto_wrap_policy.keywords["transformer_layer_cls"] == {
        type(model.bert.encoder.layer[0])
    }


def test_deepspeed_config_builds_accelerates_plugin():
    """DeepSpeed itself is not installed here; accelerate's plugin (its JSON config) builds
    without it, so the keys are checked where they end up."""
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.utils import DeepSpeedPlugin

    config = load_config_from_file(str(REPO / "recipes" / "accelerate" / "deepspeed_zero2.yaml"))
    plugin = DeepSpeedPlugin(**config.deepspeed_config)
    zero = plugin.deepspeed_config["zero_optimization"]
    assert zero["stage"] == 2
    assert zero["offload_optimizer"]["device"] == zero["offload_param"]["device"] == "none"
    assert plugin.deepspeed_config["gradient_clipping"] == 1.0
    assert plugin.deepspeed_config["gradient_accumulation_steps"] == 1
