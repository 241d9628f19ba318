"""Processes started by torchrun, and two ``distrain train`` processes acting as two nodes, train
together as one job; the ``distributed`` block is validated like every other part of the config."""

from __future__ import annotations

import time

from conftest import run_cli, text_config, write_config
from distributed_support import assert_nothing_left, cli_environment, free_port, start

TOGETHER = "x 2 worker(s) x 1 accumulation step(s)"


def test_torchrun_processes_train_to_completion(text_data, tmp_path):
    path = write_config(tmp_path / "config.json", text_config(text_data))
    out = tmp_path / "out"
    environment = cli_environment()
    process = start(["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                     "-m", "distrain", "train", str(path), "-s", str(out)], environment)
    try:
        stdout, stderr = process.communicate(timeout=180)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    assert (out / "model.tar.gz").exists() and (out / "config.json").exists()
    assert TOGETHER in (out / "out_worker0.log").read_text()
    assert (out / "out_worker1.log").exists()
    assert stdout.count("training finished") == 1  # rank 0 alone reports
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


def test_two_nodes_over_loopback_train_together_in_one_output_dir(text_data, tmp_path):
    out = tmp_path / "out"
    port = free_port()
    environment = cli_environment()
    processes = {}
    for node_rank in (1, 0):  # the second node first: it must not get in the way of node 0's checks
        config = text_config(text_data) | {
            "distributed": {"cuda_devices": [-1], "num_nodes": 2, "node_rank": node_rank, "master_port": port}
        }
        path = write_config(tmp_path / f"node{node_rank}.json", config)
        processes[node_rank] = start(["-m", "distrain", "train", str(path), "-s", str(out)], environment)
        time.sleep(0.5)
    try:
        results = {rank: process.communicate(timeout=180) for rank, process in processes.items()}
    finally:
        for process in processes.values():
            process.kill()
    for rank, process in processes.items():
        assert process.returncode == 0, f"node {rank}: {results[rank][1]}"
    assert (out / "model.tar.gz").exists()
    assert TOGETHER in (out / "out_worker0.log").read_text()
    assert (out / "out_worker1.log").exists()
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


def test_misspelled_distributed_key_suggests_the_right_one(text_data, tmp_path):
    config = text_config(text_data) | {"distributed": {"cuda_devices": [-1, -1], "device_weight": [3, 1]}}
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "out"))
    assert result.returncode == 2
    assert 'distributed.device_weight: unknown key; did you mean "device_weights"?' in result.stderr
    assert not (tmp_path / "out").exists()


def test_tasks_started_by_srun_train_together(text_data, tmp_path):
    # what srun gives each of 2 tasks on one node; distrain reads these variables and joins the job
    path = write_config(tmp_path / "config.json", text_config(text_data))
    out = tmp_path / "out"
    port = str(free_port())
    marker = cli_environment()["DISTRAIN_TEST_RUN_MARKER"]
    processes = []
    for task in (0, 1):
        environment = cli_environment(marker) | {
            "SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_PROCID": str(task), "SLURM_LOCALID": str(task),
            "SLURM_NTASKS": "2", "SLURM_STEP_TASKS_PER_NODE": "2", "SLURM_STEP_NODELIST": "127.0.0.1",
            "MASTER_PORT": port,
        }
        processes.append(start(["-m", "distrain", "train", str(path), "-s", str(out)], environment))
    try:
        results = [process.communicate(timeout=180) for process in processes]
    finally:
        for process in processes:
            process.kill()
    for process, (_, stderr) in zip(processes, results):
        assert process.returncode == 0, stderr
    assert (out / "model.tar.gz").exists()
    assert TOGETHER in (out / "out_worker0.log").read_text()
    assert_nothing_left(marker)
