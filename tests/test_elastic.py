"""Elastic runs: the world shrinks mid-run and the updates stay those of the whole world. Under torchrun
``--nnodes 1:2`` a node killed mid-epoch leaves its survivor to finish alone; with the built-in launcher
``min_workers`` leaves out a worker that fails for good. ``data_loader.global_batch_size`` keeps each step's
samples, so both end with the uninterrupted run's weights."""

from __future__ import annotations

import json
import signal

import pytest

from conftest import run_cli, sentiment_records, text_config, write_config, write_jsonl
from distributed_support import cli_environment, final_metrics, free_port, max_weight_difference, start, wait_for

PLUGIN = ("--include-package", "recovery_plugins")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("elastic-data")
    return {"train": write_jsonl(folder / "train.jsonl", sentiment_records(120, seed=1)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(40, seed=2))}


def elastic_config(data, global_batch: int, callback: str) -> dict:
    """A checkpoint after every step, the test callback that takes a worker or a node away."""
    config = text_config(data)
    config["data_loader"] = {"global_batch_size": global_batch}
    config["trainer"].update(save_every_num_batches=1, callbacks=[{"type": callback}])
    return config


def listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def assert_same_run(expected, got) -> None:
    assert max_weight_difference(expected, got) <= 1e-5
    one, two = final_metrics(expected), final_metrics(got)
    for key in ("training_loss", "validation_loss", "validation_accuracy"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key


def test_a_node_killed_under_torchrun_leaves_its_survivor_to_finish_with_the_two_node_weights(data, tmp_path):
    """Two torchrun agents (``--nnodes 1:2``, one CPU worker each, c10d rendezvous on loopback); after step 4
    the second agent and its worker are killed with SIGKILL. The first agent restarts its worker in a world
    of 1, which resumes from the step-3 checkpoint with all 16 samples a step and finishes: the weights of
    the uninterrupted 2-worker run, and ``world_changes`` in metrics.json."""
    config = elastic_config(data, 16, "test_kill_node")
    path = write_config(tmp_path / "config.json", config)
    whole = write_config(tmp_path / "whole.json", {**config, "distributed": {"cuda_devices": [-1, -1]}})
    reference = run_cli("train", str(whole), "-s", str(tmp_path / "whole"), *PLUGIN)
    assert reference.returncode == 0, reference.stderr[-3000:]
    port, out = free_port(), tmp_path / "out"
    agent = ["-m", "torch.distributed.run", "--nnodes", "1:2", "--nproc-per-node", "1", "--rdzv-backend", "c10d",
             "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "elastic", "--rdzv-conf", "last_call_timeout=15",
             "--max-restarts", "2", "-m", "distrain", "train", str(path), "-s", str(out), *PLUGIN]
    environment = cli_environment()
    survivor = start(agent, environment)
    # the first agent hosts the rendezvous store (on its endpoint): the node that dies must not be that one.
    # Once one node is in, a round waits last_call_timeout for more: long enough for the second to start
    wait_for(lambda: listening(port), 60, "the first agent's rendezvous store", survivor)
    doomed = start(agent, environment | {"DISTRAIN_TEST_KILL_NODE_AT_STEP": "4"})
    try:
        _, stderr = survivor.communicate(timeout=240)
        doomed.communicate(timeout=30)
    finally:
        survivor.kill()
        doomed.kill()
    assert doomed.returncode == -signal.SIGKILL
    assert survivor.returncode == 0, stderr[-3000:]
    assert json.loads((out / "metrics.json").read_text())["world_changes"] == [{"step": 3, "from": 2, "to": 1}]
    assert "world 2 -> 1 at step 3" in (out / "out_worker0.log").read_text()
    assert_same_run(tmp_path / "whole", out)


def test_a_worker_lost_for_good_is_left_out_and_two_finish_with_the_three_worker_weights(data, tmp_path):
    """3 CPU workers, ``min_workers: 2``, a global batch of 12 and a checkpoint after every step; worker 2
    raises after every step from step 4 on (``test_fail_on_rank``), however often it starts. It is restarted
    once, fails again at once, and the job goes on without it: 2 workers of 6 samples each finish, with the
    weights and metrics of the uninterrupted 3-worker run, and metrics.json lists the change of world."""
    config = elastic_config(data, 12, "test_fail_on_rank")
    config["distributed"] = {"cuda_devices": [-1, -1, -1], "min_workers": 2, "max_restarts": 2}
    path = write_config(tmp_path / "config.json", config)
    whole = run_cli("train", str(path), "-s", str(tmp_path / "whole"), *PLUGIN)
    assert whole.returncode == 0, whole.stderr[-3000:]
    lost = run_cli("train", str(path), "-s", str(tmp_path / "lost"), *PLUGIN,
                   env={"DISTRAIN_TEST_FAIL_RANK": "2", "DISTRAIN_TEST_FAIL_FROM_STEP": "4"})
    assert lost.returncode == 0, lost.stderr[-3000:]
    assert "world 3 -> 2: worker rank 2 failed again right after a restart; going on without it" in lost.stderr
    restarts = json.loads((tmp_path / "lost" / "metrics.json").read_text())["restarts"]
    assert [entry.get("world") for entry in restarts] == [None, "3 -> 2"]
    assert_same_run(tmp_path / "whole", tmp_path / "lost")


