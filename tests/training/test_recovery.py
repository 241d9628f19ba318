"""A run killed at a random step resumes with ``--recover`` to the very weights of an uninterrupted run."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.paths import PLUGINS, ROOT
from safetensors.torch import load_file

PLUGIN = ("--include-package", "recovery_plugins")
FINAL = "checkpoints/epoch_0002_batch_00000000/model.safetensors"


def start_training(config: Path, directory: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    """``distrain train`` in its own process group, so the test can kill the whole run."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(PLUGINS), environment.get("PYTHONPATH", "")])
    environment.update(env or {})
    return subprocess.Popen(
        [sys.executable, "-m", "distrain", "train", str(config), "-s", str(directory), *PLUGIN, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, start_new_session=True,
    )


def weights(path: Path) -> dict[str, torch.Tensor]:
    return load_file(str(path))


def metrics_without_duration(directory: Path) -> dict:
    metrics = json.loads((directory / "metrics.json").read_text())
    metrics.pop("training_duration")
    return metrics


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("data")
    return {
        "train": write_jsonl(folder / "train.jsonl", sentiment_records(120, seed=1)),
        "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(40, seed=2)),
    }


def recovery_config(data: dict[str, Path], folder: Path, workers: int = 1, dropout: float = 0.0) -> Path:
    config = text_config(data, save_every_num_batches=2, callbacks=[{"type": "test_kill_switch"}])
    config["model"]["dropout"] = dropout
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return write_config(folder / f"config_{workers}.json", config)


def kill_at_random_step(config: Path, directory: Path, steps: int, seed: int) -> int:
    step = random.Random(seed).randint(3, steps - 2)  # seeded: a failure names a step that reproduces it
    process = start_training(config, directory, env={"DISTRAIN_TEST_KILL_AT_STEP": str(step)})
    process.communicate(timeout=300)
    assert process.returncode == -signal.SIGKILL, f"the run was not killed at step {step}"
    assert (directory / "checkpoints").is_dir()
    return step


@pytest.fixture(scope="module")
def finished_run(data, tmp_path_factory) -> tuple[Path, Path]:
    """An uninterrupted 1-worker run; dropout makes its result depend on the random state too."""
    folder = tmp_path_factory.mktemp("finished")
    config = recovery_config(data, folder, workers=1, dropout=0.3)
    result = run_cli("train", str(config), "-s", str(folder / "run"), *PLUGIN)
    assert result.returncode == 0, result.stderr
    return config, folder / "run"


def assert_same_result(reference: Path, resumed: Path, context: str) -> None:
    expected, actual = weights(reference / FINAL), weights(resumed / FINAL)
    for name in expected:
        assert torch.equal(expected[name], actual[name]), f"{name} differs ({context})"
    assert metrics_without_duration(resumed) == metrics_without_duration(reference)


def test_kill_9_at_random_step_then_recover_is_bitwise_equal_on_one_worker(finished_run, tmp_path):
    config, reference = finished_run
    step = kill_at_random_step(config, tmp_path / "killed", steps=30, seed=1)  # 15 batches x 2 epochs
    recovered = run_cli("train", str(config), "-s", str(tmp_path / "killed"), *PLUGIN, "--recover")
    assert recovered.returncode == 0, recovered.stderr
    assert_same_result(reference, tmp_path / "killed", f"kill -9 at step {step}")


def test_kill_9_at_random_step_on_two_workers_then_recover_on_two_and_on_one_worker(data, tmp_path):
    config = recovery_config(data, tmp_path, workers=2)
    reference = run_cli("train", str(config), "-s", str(tmp_path / "reference"), *PLUGIN)
    assert reference.returncode == 0, reference.stderr
    step = kill_at_random_step(config, tmp_path / "killed", steps=16, seed=2)  # 8 global batches x 2 epochs
    shutil.copytree(tmp_path / "killed", tmp_path / "killed_copy")

    recovered = run_cli("train", str(config), "-s", str(tmp_path / "killed"), *PLUGIN, "--recover")
    assert recovered.returncode == 0, recovered.stderr
    assert_same_result(tmp_path / "reference", tmp_path / "killed", f"2 workers, kill -9 at step {step}")
    expected = weights(tmp_path / "reference" / FINAL)

    # the same global batch (16) on one worker continues the same global sample order
    one_worker = json.dumps({"distributed": None, "data_loader.batch_size": 16})
    resumed = run_cli("train", str(config), "-s", str(tmp_path / "killed_copy"), *PLUGIN, "--recover", "-o", one_worker)
    assert resumed.returncode == 0, resumed.stderr
    actual = weights(tmp_path / "killed_copy" / FINAL)
    for name in expected:
        assert torch.allclose(expected[name], actual[name], rtol=0, atol=1e-6), f"{name} (kill at step {step})"
    resumed_metrics = metrics_without_duration(tmp_path / "killed_copy")
    for key, value in metrics_without_duration(tmp_path / "reference").items():
        if key in ("sync_count", "sync_bytes"):  # communication, not results: one worker sends nothing
            continue
        assert resumed_metrics[key] == pytest.approx(value, abs=1e-6), key


def test_recover_refuses_a_changed_model_and_keeps_the_run(finished_run, tmp_path):
    config, run = finished_run
    shutil.copytree(run, tmp_path / "run")
    before = sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir())
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, "--recover",
                     "-o", '{"model.embedding_dim": 16, "data_loader.batch_size": 4}')
    assert result.returncode == 2
    error = result.stderr.strip().splitlines()[-1]
    assert "model.embedding_dim changed" in error and "data_loader.batch_size" in error
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir()) == before


def test_recover_accepts_more_epochs_and_trains_only_the_new_one(finished_run, tmp_path):
    config, run = finished_run
    shutil.copytree(run, tmp_path / "run")
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, "--recover",
                     "-o", '{"trainer.num_epochs": 3, "trainer.patience": 5}')
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["epoch"] == 2
    assert "resumed from epoch_0002_batch_00000000" in (tmp_path / "run" / "out_worker0.log").read_text()


def test_a_truncated_checkpoint_is_refused_in_one_line(finished_run, tmp_path):
    config, run = finished_run
    shutil.copytree(run, tmp_path / "run")
    state = tmp_path / "run" / "checkpoints" / "epoch_0002_batch_00000000" / "training_state.pt"
    state.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, "--recover")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(f"error: {state}: truncated or corrupt checkpoint")
    assert message.endswith(f"to resume from the checkpoint before it, delete {state.parent}")


def test_recover_and_force_are_mutually_exclusive_and_a_used_dir_needs_one_of_them(finished_run):
    config, run = finished_run
    both = run_cli("train", str(config), "-s", str(run), "--recover", "--force")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    neither = run_cli("train", str(config), "-s", str(run), *PLUGIN)
    assert neither.returncode == 2 and "--recover" in neither.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_stops_at_a_step_boundary_writes_a_checkpoint_and_says_how_to_resume(data, finished_run, tmp_path, workers):
    config = finished_run[0] if workers == 1 else recovery_config(data, tmp_path, workers=workers)
    marker = tmp_path / "marker"
    run = tmp_path / "run"
    process = start_training(config, run, env={"DISTRAIN_TEST_MARK_AT_STEP": "3", "DISTRAIN_TEST_MARKER": str(marker)})
    deadline = time.monotonic() + 240
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)  # only the main process, as a scheduler would
    _, stderr = process.communicate(timeout=240)
    assert process.returncode == 1, stderr
    message = stderr.strip().splitlines()[-1]
    assert "stopped by SIGTERM" in message
    command = f"distrain train {config} -s {run} --include-package recovery_plugins --recover"
    assert message.endswith(f"resume with: {command}")
    latest = sorted((run / "checkpoints").glob("epoch_*"))[-1]
    position = json.loads((latest / "meta.json").read_text())["position"]
    # the signal came during step 3; every worker stops together after the next step, none is lost
    assert position == {"epoch": 0, "batches": 4}
    if workers == 1:  # the printed command resumes to the uninterrupted run's result
        resumed = run_cli(*command.split()[1:])
        assert resumed.returncode == 0, resumed.stderr
        assert_same_result(finished_run[1], run, "SIGTERM after step 3")


def test_an_fsdp_run_resumed_between_an_epochs_last_batch_and_its_validation_ends_with_the_same_weights(data, tmp_path):
    """The resumed run's first forward is validation's: FSDP allocates its gathered-parameter buffers there, and
    under inference mode they would stay inference tensors that the next training step cannot gather into
    (found by scripts/chaos.py)."""
    settings = json.loads(recovery_config(data, tmp_path, workers=2).read_text())
    settings["distributed"] |= {"strategy": {"type": "fsdp"}, "max_restarts": 0}
    config = tmp_path / "fsdp.json"
    config.write_text(json.dumps(settings))
    reference = run_cli("train", str(config), "-s", str(tmp_path / "reference"), *PLUGIN)
    assert reference.returncode == 0, reference.stderr
    first = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, "-o", '{"trainer.num_epochs": 1}')
    assert first.returncode == 0, first.stderr
    checkpoints = tmp_path / "run" / "checkpoints"
    assert (checkpoints / "epoch_0000_batch_00000008").is_dir()  # the last batch of epoch 1, before validation
    for later in ("epoch_0001_batch_00000000", "best.txt", "best.safetensors"):
        shutil.rmtree(checkpoints / later) if (checkpoints / later).is_dir() else (checkpoints / later).unlink()
    resumed = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, "--recover")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert_same_result(tmp_path / "reference", tmp_path / "run", "FSDP resumed before validation")
