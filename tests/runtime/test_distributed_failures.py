"""A failing worker, Ctrl-C and SIGTERM end the whole job promptly and leave no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from support.configs import text_config, write_config
from support.distributed import assert_nothing_left, cli_environment, start

TWO_CPU_WORKERS = {"cuda_devices": [-1, -1]}


def test_spawned_worker_raising_on_rank_one_ends_job_with_its_traceback(text_data, tmp_path):
    # collectives would wait 120 s for the failed worker: ending well before that shows it was stopped
    config = text_config(text_data) | {"distributed": TWO_CPU_WORKERS | {"timeout": 120}}
    config["model"]["type"] = "fails_on_rank_one"
    path = write_config(tmp_path / "failing.json", config)
    # spawned (not forked) workers: the plugin model exists in them only if they import the plugin
    environment = cli_environment() | {"DISTRAIN_START_METHOD": "spawn"}
    process = start(["-m", "distrain", "train", str(path), "-s", str(tmp_path / "out"),
                     "--include-package", "rank_one_failure"], environment)
    try:  # the job ends by itself (rank 0 is not left waiting in a collective): a hang fails here, not a duration
        _, stderr = process.communicate(timeout=180)
    finally:
        process.kill()
    assert process.returncode not in (0, None)
    assert "worker rank 1 failed" in stderr
    assert "RuntimeError: deliberate failure in forward pass 3" in stderr
    assert "rank_one_failure.py" in stderr  # the original traceback, not just the message
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


def start_long_run(text_data, tmp_path: Path) -> tuple[subprocess.Popen, dict, Path]:
    config = text_config(text_data, num_epochs=100000) | {"distributed": TWO_CPU_WORKERS}
    path = write_config(tmp_path / "long.json", config)
    out = tmp_path / "out"
    environment = cli_environment()
    process = start(["-m", "distrain", "train", str(path), "-s", str(out)], environment, start_new_session=True)
    deadline = time.monotonic() + 90
    while not (out / "metrics_epoch_0.json").exists():  # both workers are training
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "training did not start"
        time.sleep(0.2)
    return process, environment, out


def test_sigterm_to_the_parent_stops_every_worker(text_data, tmp_path):
    process, environment, _ = start_long_run(text_data, tmp_path)
    try:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode != 0
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


def test_ctrl_c_stops_every_worker(text_data, tmp_path):
    process, environment, _ = start_long_run(text_data, tmp_path)
    try:
        os.killpg(process.pid, signal.SIGINT)  # what the terminal does: the whole foreground group
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode != 0, stderr
    assert_nothing_left(environment["DISTRAIN_TEST_RUN_MARKER"])


def test_the_first_recorded_failure_is_the_one_reported(tmp_path):
    """A worker's failure closes its connections, and its peers' collectives fail a moment later: the
    parent reports the earliest failure a worker recorded, whichever process exited first."""
    import json

    from distrain.runtime.spawn import first_failure

    assert first_failure(str(tmp_path)) is None
    (tmp_path / "failed_rank0.json").write_text(json.dumps({"rank": 0, "time": 12.5, "traceback": "lost peer"}))
    (tmp_path / "failed_rank1.json").write_text(json.dumps({"rank": 1, "time": 12.25, "traceback": "the cause"}))
    (tmp_path / "failed_rank2.json").write_text("{not json")  # a worker killed while writing
    assert first_failure(str(tmp_path))["rank"] == 1
