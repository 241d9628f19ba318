"""LoRA on a pretrained tiny Llama folder (the base frozen, read from the folder; checkpoints, full or sharded,
hold the adapters alone) takes the same steps on one process, DDP 2 (device weights 3:1, 2 micro-batches a step)
and FSDP 2 (step losses and adapter weights
within 1e-5); a one-process run killed with SIGKILL mid-epoch resumes with ``--recover`` bitwise to the
uninterrupted one, and on FSDP 2 to within 1e-5 of it."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.distributed import MARKER, assert_nothing_left, cli_environment, start, unequal_weights
from support.distributed import max_weight_difference
from support.transformer_fixtures import write_corpus, write_tiny_llama

GLOBAL_BATCH = 8
PLUGINS = ("--include-package", "step_losses", "--include-package", "recovery_plugins")
KILLED_AT = 3  # killed in step 3's callbacks, before its checkpoint: resumed from the one after step 2
RESUMED_FROM = "epoch_0000_batch_00000002"


def lora_config(root: Path, losses: Path, workers: int = 1, strategy: str = "ddp", resumable: bool = False,
                sharded: bool = False, accumulation: int = 1, device_weights: list[int] | None = None) -> dict:
    """2 epochs of 4 global batches of 16-token blocks; ``resumable``: a checkpoint
    after every batch, all kept, and the test kill switch; ``sharded``: checkpoints in the sharded format. The best
    epoch's weights are loaded at the end (a validation set), through the checkpoint format. ``accumulation``
    micro-batches make each step's batch of 8 (split by ``device_weights`` when given)."""
    folder = root / "llama"
    if not folder.exists():
        write_tiny_llama(folder)
        write_corpus(root / "corpus", files=1, sentences=60, seed=3)
        write_corpus(root / "heldout", files=1, sentences=12, seed=4)
    config = {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": str(folder), "sequence_length": 16},
        "train_data_path": str(root / "corpus"),
        "validation_data_path": str(root / "heldout"),
        "model": {"type": "causal_language_model", "model_name": str(folder),
                  "adapter": {"type": "lora", "r": 4, "alpha": 8}},
        "data_loader": {"batch_size": GLOBAL_BATCH // workers // accumulation, "shuffle": True},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adamw", "lr": 0.03}, "grad_norm": 1.0,
                    "num_gradient_accumulation_steps": accumulation,
                    "progress_bar": False, "random_seed": 7,
                    "callbacks": [{"type": "test_step_losses", "folder": str(losses)}]},
    }
    if resumable:
        config["trainer"].update(save_every_num_batches=1, keep_checkpoints=0)
        config["trainer"]["callbacks"].insert(0, {"type": "test_kill_switch"})
    if sharded:
        config["trainer"]["checkpoint_format"] = "sharded"
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers, "strategy": {"type": strategy}}
        if device_weights:
            config["distributed"]["device_weights"] = device_weights
    return config


def step_losses(losses: Path) -> list[float]:
    ranks = [[json.loads(line) for line in path.read_text().splitlines()] for path in sorted(losses.glob("rank*.jsonl"))]
    assert ranks and len({len(steps) for steps in ranks}) == 1
    return [sum(steps[i]["sum"] for steps in ranks) / sum(steps[i]["weight"] for steps in ranks)
            for i in range(len(ranks[0]))]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("adapter_layouts")
    # DDP 2 also splits each micro-batch 3:1 and accumulates 2 of them a step: the same 8 blocks a step
    layouts = {"one": {}, "ddp2": {"workers": 2, "accumulation": 2, "device_weights": [3, 1]},
               "fsdp2": {"workers": 2, "strategy": "fsdp", "sharded": True}}
    for name, layout in layouts.items():
        config = write_config(root / f"{name}.json", lora_config(root, root / name / "losses", **layout))
        result = run_cli("train", str(config), "-s", str(root / name / "out"), *PLUGINS, timeout=300)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
    return root


@pytest.mark.parametrize("layout", ["ddp2", "fsdp2"])
def test_lora_takes_the_steps_of_one_process_under(runs, layout):
    expected, got = step_losses(runs / "one" / "losses"), step_losses(runs / layout / "losses")
    assert len(expected) == 2 * 4
    assert expected[-1] < expected[0] - 0.1  # the adapters learn (a random base, its output layer frozen)
    assert len(got) == len(expected) and max(abs(a - b) for a, b in zip(expected, got)) <= 1e-5
    assert max_weight_difference(runs / "one" / "out", runs / layout / "out") <= 1e-5


def test_checkpoints_of_every_layout_hold_the_adapters_alone(runs):
    from safetensors import safe_open
    from torch.distributed.checkpoint import FileSystemReader

    for layout in ("one", "ddp2"):
        last = sorted((runs / layout / "out" / "checkpoints").glob("epoch_*"))[-1]  # the end of epoch 2
        with safe_open(str(last / "model.safetensors"), "pt") as handle:
            names = list(handle.keys())
        assert len(names) == 2 * 7 * 2 and all(".lora_" in name for name in names), (layout, names)
    last = sorted((runs / "fsdp2" / "out" / "checkpoints").glob("epoch_*"))[-1]  # FSDP's, in the sharded format
    stored = FileSystemReader(str(last / "sharded")).read_metadata().state_dict_metadata
    names = [name for name in stored if name.startswith("model.")]
    assert len(names) == 2 * 7 * 2 and all(".lora_" in name for name in names), names


def test_a_lora_run_killed_mid_epoch_resumes_bitwise_and_on_fsdp2(runs, tmp_path):
    config = write_config(tmp_path / "killed.json", lora_config(runs, tmp_path / "losses", resumable=True))
    environment = cli_environment() | {"DISTRAIN_TEST_KILL_AT_STEP": str(KILLED_AT)}
    out = tmp_path / "out"
    process = start(["-m", "distrain", "train", str(config), "-s", str(out), *PLUGINS], environment,
                    start_new_session=True)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == -signal.SIGKILL, stderr[-3000:]
    assert_nothing_left(environment[MARKER])
    assert sorted(path.name for path in (out / "checkpoints").iterdir())[-1] == RESUMED_FROM
    shutil.rmtree(tmp_path / "losses")
    shutil.copytree(out, tmp_path / "out_fsdp2")
    result = run_cli("train", str(config), "-s", str(out), "--recover", *PLUGINS, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"resumed from {RESUMED_FROM}" in (out / "out_worker0.log").read_text()
    expected = step_losses(runs / "one" / "losses")[KILLED_AT - 1:]
    assert step_losses(tmp_path / "losses") == expected
    assert unequal_weights(runs / "one" / "out", out) == []
    # the same checkpoint resumed on another layout: FSDP 2 takes the same steps, to float tolerance
    config = write_config(tmp_path / "fsdp2.json", lora_config(runs, tmp_path / "losses_fsdp2", workers=2,
                                                              strategy="fsdp", resumable=True))
    result = run_cli("train", str(config), "-s", str(tmp_path / "out_fsdp2"), "--recover", *PLUGINS, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    got = step_losses(tmp_path / "losses_fsdp2")
    assert len(got) == len(expected) and max(abs(a - b) for a, b in zip(expected, got)) <= 1e-5
    assert max_weight_difference(runs / "one" / "out", tmp_path / "out_fsdp2") <= 1e-5
