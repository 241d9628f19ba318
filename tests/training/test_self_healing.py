"""Self-healing runs with real processes: lost workers restart from the latest checkpoint (spawned
and under torchrun) and end exactly where an uninterrupted run ends; input errors never restart; a
hang ends the job naming the rank that did not arrive, with every rank's stack in its log."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest
import torch

from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.distributed import assert_nothing_left, cli_environment, free_port, start
from support.paths import PLUGINS
from safetensors.torch import load_file

PLUGIN = ("--include-package", "self_healing_plugins")
FINAL = "checkpoints/epoch_0002_batch_00000000/model.safetensors"
STEPS = 16  # 128 records / (8 per worker x 2 workers) x 2 epochs


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("healing_data")
    return {"train": write_jsonl(folder / "train.jsonl", sentiment_records(128, seed=11)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(32, seed=12))}


def healing_config(data, folder: Path, distributed: dict | None, **model) -> Path:
    config = text_config(data, save_every_num_batches=2, callbacks=[{"type": "test_kill_rank_one"}])
    config["model"].update(model)
    if distributed is not None:
        config["distributed"] = distributed
    return write_config(folder / "config.json", config)


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory) -> Path:
    """An uninterrupted 2-worker run."""
    folder = tmp_path_factory.mktemp("healing_reference")
    config = healing_config(data, folder, {"cuda_devices": [-1, -1]})
    result = run_cli("train", str(config), "-s", str(folder / "run"), *PLUGIN)
    assert result.returncode == 0, result.stderr
    return folder / "run"


def lived_through(run: Path) -> list[dict]:
    """The run's history less the ``stopped`` lines: rank 0 notes one when its killed peer's lost connection
    reaches it before its launcher stops it, which is a matter of timing."""
    history = [json.loads(line) for line in (run / "history.jsonl").read_text().splitlines()]
    assert all(event["reason"] for event in history if event["event"] == "stopped")
    return [event for event in history if event["event"] != "stopped"]


def final_weights(run: Path) -> dict[str, torch.Tensor]:
    return load_file(str(run / FINAL))


@pytest.mark.default_start_method  # restarted workers cannot be forked (threads run by then): served, not spawned
def test_two_kill_9_of_a_worker_restart_twice_and_end_bitwise_equal(data, reference, tmp_path):
    kills = sorted(random.Random(54).sample(range(2, STEPS), 2))  # seeded: a failure reproduces
    config = healing_config(data, tmp_path, {"cuda_devices": [-1, -1], "max_restarts": 2})
    markers = tmp_path / "markers"
    markers.mkdir()
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, env={
        "DISTRAIN_TEST_KILL_STEPS": ",".join(map(str, kills)), "DISTRAIN_TEST_KILL_MARKERS": str(markers)})
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in markers.iterdir()) == sorted(f"killed_at_{k}" for k in kills)
    assert "restart 1 of 2: worker rank 1 was killed by SIGKILL" in result.stderr
    assert "restart 2 of 2: worker rank 1 was killed by SIGKILL" in result.stderr
    restarts = json.loads((tmp_path / "run" / "metrics.json").read_text())["restarts"]
    assert [r["cause"] for r in restarts] == ["worker rank 1 was killed by SIGKILL"] * 2
    history = lived_through(tmp_path / "run")
    assert [event["event"] for event in history] == ["started", "restart", "resumed", "restart", "resumed", "finished"]
    assert history[1]["cause"] == "worker rank 1 was killed by SIGKILL" and history[3]["attempt"] == 2
    expected, actual = final_weights(reference), final_weights(tmp_path / "run")
    for name in expected:
        assert torch.equal(expected[name], actual[name]), f"{name} differs (kills at steps {kills})"


def test_an_input_error_with_max_restarts_fails_once_with_exit_2(data, tmp_path):
    config = healing_config(data, tmp_path, {"cuda_devices": [-1, -1], "max_restarts": 2},
                            type="test_bad_input_on_rank_one")
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN)
    assert result.returncode == 2, result.stderr
    assert "deliberate bad record" in result.stderr.strip().splitlines()[-1]
    assert "restart" not in result.stderr
    bad = json.loads(config.read_text())
    bad["distributed"]["max_restarts"] = -1
    bad["trainer"]["num_epohcs"] = 3
    invalid = run_cli("train", str(write_config(tmp_path / "bad.json", bad)), "-s", str(tmp_path / "bad"), *PLUGIN)
    assert invalid.returncode == 2 and "distributed.max_restarts" in invalid.stderr and "restart " not in invalid.stderr


def test_a_hang_ends_the_job_naming_the_rank_and_its_stack(data, tmp_path):
    config = healing_config(data, tmp_path, {"cuda_devices": [-1, -1], "timeout": 20}, type="test_sleeps_on_rank_one")
    started = time.monotonic()
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, timeout=120)
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    assert elapsed < 60, f"took {elapsed:.0f} s"
    message = result.stderr.strip().splitlines()[-1]
    assert "did not arrive: rank 1 in forward" in message and "rank 0 in" not in message.split("waiting")[0]
    source = (PLUGINS / "self_healing_plugins.py").read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(source) if "SLEEPING LINE" in text)
    log = (tmp_path / "run" / "out_worker1.log").read_text()
    assert f'self_healing_plugins.py", line {line} in forward' in log
    assert "made no progress" in (tmp_path / "run" / "out_worker0.log").read_text()


def torchrun(arguments: list[str], environment: dict) -> tuple[int, str]:
    process = start(["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", *arguments], environment)
    try:
        _, stderr = process.communicate(timeout=300)
    finally:
        process.kill()
    return process.returncode, stderr


def test_torchrun_max_restarts_resumes_killed_workers_from_the_latest_checkpoint(data, reference, tmp_path):
    config = healing_config(data, tmp_path, None)
    markers = tmp_path / "markers"
    markers.mkdir()
    environment = cli_environment() | {"DISTRAIN_TEST_KILL_STEPS": str(random.Random(114).randint(3, STEPS - 2)),
                                       "DISTRAIN_TEST_KILL_MARKERS": str(markers)}
    status, stderr = torchrun(["--max-restarts", "1", "-m", "distrain", "train", str(config), "-s",
                               str(tmp_path / "run"), *PLUGIN], environment)
    assert status == 0, stderr
    assert len(list(markers.iterdir())) == 1
    assert "resumed from" in (tmp_path / "run" / "out_worker0.log").read_text()
    history = lived_through(tmp_path / "run")
    assert [event["event"] for event in history] == ["started", "restart", "resumed", "finished"]
    assert history[1]["launcher"] == "torchrun" and history[1]["restart_count"] == 1
    expected, actual = final_weights(reference), final_weights(tmp_path / "run")
    for name in expected:
        assert torch.allclose(expected[name], actual[name], rtol=0, atol=1e-6), name
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


@pytest.mark.parametrize("launcher", ["torchrun", "srun"])
def test_recover_works_under_torchrun_and_slurm(data, reference, tmp_path, launcher):
    config = healing_config(data, tmp_path, None)
    markers = tmp_path / "markers"
    markers.mkdir()
    kill = {"DISTRAIN_TEST_KILL_STEPS": str(random.Random(launcher).randint(3, STEPS - 2)),
            "DISTRAIN_TEST_KILL_MARKERS": str(markers)}
    marker = cli_environment()["DISTRAIN_TEST_RUN_MARKER"]

    def launch(*extra: str, environment: dict) -> int:
        arguments = ["-m", "distrain", "train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, *extra]
        if launcher == "torchrun":
            return torchrun(arguments, environment)[0]
        port = str(free_port())
        processes = [start(arguments, environment | {
            "SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_PROCID": str(task), "SLURM_LOCALID": str(task),
            "SLURM_NTASKS": "2", "SLURM_STEP_TASKS_PER_NODE": "2", "SLURM_STEP_NODELIST": "127.0.0.1",
            "MASTER_PORT": port}) for task in (0, 1)]
        try:
            for process in processes:
                process.communicate(timeout=300)
        finally:
            for process in processes:
                process.kill()
        return max(abs(process.returncode) for process in processes)

    assert launch(environment=cli_environment(marker) | kill) != 0  # rank 1 killed: the job fails
    assert_nothing_left(marker, within=60)
    assert launch("--recover", environment=cli_environment(marker)) == 0
    assert "resumed from" in (tmp_path / "run" / "out_worker0.log").read_text()
    expected, actual = final_weights(reference), final_weights(tmp_path / "run")
    for name in expected:
        assert torch.allclose(expected[name], actual[name], rtol=0, atol=1e-6), name
