"""recipes/accelerate/*.yaml: read by accelerate's own loader and launcher, as `accelerate launch`
reads them, and each plugin section turned into the plugin accelerate would build."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cdsbias.runs.points import read_points

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted((REPO / "recipes" / "accelerate").glob("*.yaml"))

# What each config is for: distributed type, mixed precision, processes. A new config needs a
# line here and a row in docs/recipes.md's launch-config table (which says what it was run on).
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
    # parallelism_config: accelerate >= 1.10 only.
    assert not (config.megatron_lm_config or config.fp8_config)
    assert not getattr(config, "parallelism_config", None)


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


def test_fsdp_launch_without_accelerator_is_refused(tmp_path, monkeypatch, capsys):
    """What every process of an FSDP launch on CPUs does (the integration test below runs it):
    one error line, exit 2, nothing written."""
    from cdsbias.train.run import main as train_main

    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    out = tmp_path / "run"
    assert train_main(["recipes/smoke.yaml", "use_cpu=true", f"output_dir={out}"]) == 2
    assert capsys.readouterr().err.startswith("error: an FSDP launch config needs GPUs")
    assert not out.exists()


# --- Launching the configs on CPU processes (gloo) -------------------------------------------

SMOKE = ["recipes/smoke.yaml", "max_steps=3", "save_steps=3", "report_to=none", "use_cpu=true"]


def accelerate_launch(config: str, *args: str) -> subprocess.CompletedProcess:
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    if accelerate is None:
        pytest.skip("accelerate launcher not installed")
    command = [accelerate, "launch", "--config_file", f"recipes/accelerate/{config}.yaml", *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


def becpro_at_step_0(run: Path) -> dict[str, float | list[float]]:
    first = read_points(run)[0]
    assert first["step"] == 0
    becpro = first["benchmarks"]["becpro"]
    return {**becpro["metrics"], **becpro["curve"]}


@pytest.fixture(scope="module")
def one_process_run(tmp_path_factory, shared_data) -> Path:
    """The smoke recipe in this process, without any launcher: the reference run."""
    from cdsbias.train.run import main as train_main

    out = tmp_path_factory.mktemp("one") / "run"
    data = [f"data_dir={shared_data}", f"bias_data_dir={shared_data}"]
    assert train_main([*SMOKE, *data, f"output_dir={out}"]) == 0
    return out


@pytest.mark.integration
@pytest.mark.parametrize("config, processes", [("multi_gpu", 2), ("single_gpu", 1)])
def test_cpu_launch_scores_step_0_as_one_process(
    tmp_path, shared_data, one_process_run, config, processes
):
    """The config as written, on CPU processes (use_cpu=true: gloo for two): the step-0 BEC-Pro
    metrics, scored on the same seeded initial model, equal the reference run's to rtol 1e-4
    with atol 1e-8: two processes batch the 5400 sentences differently in float32, which moves
    the association means (about 1e-4 nats) by at most 6e-9 and the Wilcoxon r by 1e-5 (rel.)."""
    out = tmp_path / "run"
    data = [f"data_dir={shared_data}", f"bias_data_dir={shared_data}"]
    done = accelerate_launch(config, "train.py", *SMOKE, *data, f"output_dir={out}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert [p["step"] for p in read_points(out)] == [0, 3]
    launched, reference = becpro_at_step_0(out), becpro_at_step_0(one_process_run)
    assert launched.keys() == reference.keys()
    for key, value in reference.items():
        np.testing.assert_allclose(launched[key], value, rtol=1e-4, atol=1e-8, err_msg=key)
    # Each step draws one batch per process: N processes cover N times the data in 3 steps.
    epochs = [json.loads((r / "trainer_state.json").read_text())["epoch"]
              for r in (out, one_process_run)]  # fmt: skip
    assert epochs[0] / epochs[1] == pytest.approx(processes, rel=0.05)


@pytest.mark.integration
def test_fsdp_config_on_cpu_processes_is_refused(tmp_path, shared_data):
    """torch's FSDP (1 and 2) runs on CPU/gloo, but accelerate applies an FSDP config only on
    accelerator devices: on CPU processes it would train DDP under the FSDP config's name."""
    out = tmp_path / "run"
    data = [f"data_dir={shared_data}", f"bias_data_dir={shared_data}"]
    done = accelerate_launch(
        "fsdp", "--mixed_precision", "no", "train.py", *SMOKE, *data, f"output_dir={out}"
    )
    assert done.returncode != 0
    assert "error: an FSDP launch config needs GPUs" in done.stderr
    assert "CdsbiasError" not in done.stderr  # the line, not a traceback (the launcher adds one)
    assert not out.exists()
