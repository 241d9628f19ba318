"""Processes started by torchrun, by srun, and two ``distrain train`` processes acting as two nodes,
train together as one job, and make the very updates of one process on the same global batch; the
``distributed`` block is validated like every other part of the config."""

from __future__ import annotations

import json
import random
import socket
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.distributed import (
    assert_nothing_left, cli_environment, final_metrics, max_weight_difference, retry_if_port_taken, start, wait_for,
)

TOGETHER = "effective batch size 16 = 8 per worker x 2 worker(s) x 1 accumulation step(s)"
SECONDS = 180
#: plain SGD: Adam normalises a gradient's scale away, and a gradient scaled wrongly by the world size would pass
SGD = {"type": "sgd", "lr": 0.5}


@pytest.fixture(scope="module")
def launcher_data(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("launcher-data")
    return {
        "train": write_jsonl(folder / "train.jsonl", sentiment_records(120, seed=1)),
        "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(40, seed=2)),
    }


@pytest.fixture(scope="module")
def one_process(launcher_data, tmp_path_factory) -> Path:
    """The reference: one plain process on the global batch of 16 the 2-worker jobs split 8 + 8."""
    folder = tmp_path_factory.mktemp("one-process")
    config = text_config(launcher_data, optimizer=SGD) | {"data_loader": {"batch_size": 16}}
    result = run_cli("train", str(write_config(folder / "config.json", config)), "-s", str(folder / "out"))
    assert result.returncode == 0, result.stderr
    return folder / "out"


def assert_matches_one_process(out: Path, one_process: Path) -> None:
    assert max_weight_difference(one_process, out) <= 1e-5
    expected, got = final_metrics(one_process), final_metrics(out)
    for key in ("training_loss", "training_accuracy", "validation_loss", "validation_accuracy"):
        assert got[key] == pytest.approx(expected[key], abs=1e-5), key


def finish(processes: dict, timeout: float = SECONDS) -> dict:
    try:
        return {name: process.communicate(timeout=timeout) for name, process in processes.items()}
    finally:
        for process in processes.values():
            process.kill()


def test_torchrun_processes_train_together_and_match_one_process(launcher_data, one_process, tmp_path):
    path = write_config(tmp_path / "config.json", text_config(launcher_data, optimizer=SGD))
    out = tmp_path / "out"
    environment = cli_environment()
    # --standalone: torchrun's rendezvous binds port 0 itself, so no port is chosen here
    process = start(["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                     "-m", "distrain", "train", str(path), "-s", str(out)], environment)
    (stdout, stderr), = finish({"torchrun": process}).values()
    assert process.returncode == 0, stderr
    assert (out / "model.tar.gz").exists() and (out / "config.json").exists()
    assert TOGETHER in (out / "out_worker0.log").read_text()
    assert (out / "out_worker1.log").exists()
    assert stdout.count("training finished") == 1  # rank 0 alone reports
    assert_matches_one_process(out, one_process)
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


def test_two_nodes_over_loopback_train_together_in_one_output_dir_and_match_one_process(
    launcher_data, one_process, tmp_path
):
    environment = cli_environment()

    def two_nodes(port: int, attempt: int) -> tuple[tuple[dict, dict, Path], str]:
        out = tmp_path / f"out{attempt}"
        processes, logs = {}, {}
        for node_rank in (1, 0):  # the second node first: it must not get in the way of node 0's checks
            config = text_config(launcher_data, optimizer=SGD) | {
                "distributed": {"cuda_devices": [-1], "num_nodes": 2, "node_rank": node_rank, "master_port": port}
            }
            path = write_config(tmp_path / f"node{node_rank}-{attempt}.json", config)
            logs[node_rank] = tmp_path / f"node{node_rank}-{attempt}.stderr"
            with open(logs[node_rank], "w") as stderr:
                processes[node_rank] = start(["-m", "distrain", "train", str(path), "-s", str(out)], environment,
                                             stderr=stderr)
            if node_rank == 1:  # node 1 has read its data and is starting its worker before node 0 starts
                wait_for(lambda: "starting 1 worker(s)" in logs[1].read_text(), SECONDS, "worker start on node 1",
                         processes[1])
        results = finish(processes)
        errors = {rank: log.read_text() for rank, log in logs.items()}
        return (results, processes, errors, out), "".join(errors.values())

    _, processes, errors, out = retry_if_port_taken(two_nodes)
    for rank, process in processes.items():
        assert process.returncode == 0, f"node {rank}: {errors[rank]}"
    assert (out / "model.tar.gz").exists()
    assert TOGETHER in (out / "out_worker0.log").read_text()
    assert (out / "out_worker1.log").exists()
    assert_matches_one_process(out, one_process)
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


def test_misspelled_distributed_key_suggests_the_right_one(text_data, tmp_path):
    config = text_config(text_data) | {"distributed": {"cuda_devices": [-1, -1], "device_weight": [3, 1]}}
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "out"))
    assert result.returncode == 2
    assert 'distributed.device_weight: unknown key; did you mean "device_weights"?' in result.stderr
    assert not (tmp_path / "out").exists()


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_tasks_started_by_srun_meet_on_the_node_list_and_job_id_port_and_match_one_process(
    launcher_data, one_process, tmp_path
):
    # what srun gives each of 2 tasks on one node: no MASTER_ADDR/MASTER_PORT, so distrain takes the
    # first host of the (bracketed) node list and derives the port from the job id
    path = write_config(tmp_path / "config.json", text_config(launcher_data, optimizer=SGD))
    marker = cli_environment()["DISTRAIN_TEST_RUN_MARKER"]
    job_ids = (job_id for job_id in random.Random(18).sample(range(1, 10**6), 50)
               if port_is_free(15000 + job_id % 20000))

    def srun(_port: int, attempt: int) -> tuple[tuple[dict, dict, Path, int], str]:
        job_id = next(job_ids)
        out = tmp_path / f"out{attempt}"
        processes = {}
        for task in (0, 1):
            environment = cli_environment(marker) | {
                "SLURM_JOB_ID": str(job_id), "SLURM_STEP_ID": "0", "SLURM_PROCID": str(task),
                "SLURM_LOCALID": str(task), "SLURM_NTASKS": "2", "SLURM_STEP_TASKS_PER_NODE": "2",
                "SLURM_STEP_NODELIST": "127.0.0.[1-2]", "SLURM_JOB_NODELIST": "127.0.0.[1-2]",
            }
            for name in ("MASTER_ADDR", "MASTER_PORT"):
                environment.pop(name, None)
            processes[task] = start(["-m", "distrain", "train", str(path), "-s", str(out)], environment)
        results = finish(processes)
        return (results, processes, out, job_id), "".join(stderr for _, stderr in results.values())

    results, processes, out, job_id = retry_if_port_taken(srun)
    for task, process in processes.items():
        assert process.returncode == 0, f"task {task} of job {job_id}: {results[task][1]}"
    assert (out / "model.tar.gz").exists()
    assert TOGETHER in (out / "out_worker0.log").read_text()
    assert_matches_one_process(out, one_process)
    assert json.loads((out / "config.json").read_text())["data_loader"]["batch_size"] == 8
    assert_nothing_left(marker)
