"""A run's history (``history.jsonl``) says how it got to its end, and nothing a killed writer left outlives the run:
a run killed before its first checkpoint is taken up again by ``--recover`` from the start, a pre-empted one from
its checkpoint, both ending with the uninterrupted run's weights; a resumed run removes the temporary files and
folders killed writers left in its folders; a dataset cache build removes a dead build's folder; a command killed
with ``kill -9`` has its temporary folder removed by the next command."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from support.cli import run_cli
from support.configs import text_config, write_config
from support.paths import ROOT
from test_recovery import start_training

PLUGIN = ("--include-package", "recovery_plugins")
FINAL = "checkpoints/epoch_0002_batch_00000000/model.safetensors"


def events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "history.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    from support.data import sentiment_records, write_jsonl

    folder = tmp_path_factory.mktemp("history")
    data = {"train": write_jsonl(folder / "train.jsonl", sentiment_records(120, seed=1)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(40, seed=2))}
    settings = text_config(data, save_every_num_batches=4, callbacks=[{"type": "test_kill_switch"}])
    settings["model"]["dropout"] = 0.3  # the result depends on the random state too
    return write_config(folder / "config.json", settings)


@pytest.fixture(scope="module")
def reference(config, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("history_reference") / "run"
    result = run_cli("train", str(config), "-s", str(run), *PLUGIN)
    assert result.returncode == 0, result.stderr
    return run


def assert_same_weights(reference: Path, run: Path) -> None:
    expected, actual = load_file(str(reference / FINAL)), load_file(str(run / FINAL))
    for name in expected:
        assert torch.equal(expected[name], actual[name]), name


def test_killed_before_its_first_checkpoint_then_preempted_the_run_ends_as_the_uninterrupted_one_and_says_so(
        config, reference, tmp_path):
    run = tmp_path / "run"
    killed = start_training(config, run, env={"DISTRAIN_TEST_KILL_AT_STEP": "2"})  # the first checkpoint is at 4
    killed.communicate(timeout=300)
    assert killed.returncode == -signal.SIGKILL and not list((run / "checkpoints").glob("epoch_*"))

    marker = tmp_path / "marker"
    resumed = start_training(config, run, "--recover", env={"DISTRAIN_TEST_MARK_AT_STEP": "6",
                                                            "DISTRAIN_TEST_MARKER": str(marker)})
    deadline = time.monotonic() + 240
    while not marker.exists() and resumed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    resumed.send_signal(signal.SIGTERM)
    _, stderr = resumed.communicate(timeout=240)
    assert resumed.returncode == 1 and "stopped by SIGTERM" in stderr
    assert "no complete checkpoint yet; starting the run from the beginning" in stderr

    finished = run_cli("train", str(config), "-s", str(run), *PLUGIN, "--recover")
    assert finished.returncode == 0, finished.stderr
    assert_same_weights(reference, run)
    history = events(run)
    assert [event["event"] for event in history] == ["started", "recover", "stopped", "recover", "resumed", "finished"]
    assert history[1]["checkpoint"] is None  # the kill -9 left no line of its own: a recover follows a start
    assert "stopped by SIGTERM after step 7" in history[2]["reason"] and history[2]["step"] == 7
    assert history[3]["checkpoint"] == history[4]["checkpoint"] == "epoch_0000_batch_00000007"
    assert history[4]["step"] == 7 and history[4]["world_size"] == 1 and history[5]["step"] == 30


def test_a_resumed_run_removes_what_killed_writers_left_in_its_folders(config, reference, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(reference, run)
    planted = [run / ".tmp-archive-k1ll3d", run / ".tmp-model.tar.gz-k1ll3d", run / ".tmp-metrics.json-k1ll3d",
               run / "checkpoints" / ".tmp-epoch_0002_batch_00000000-k1ll3d", run / "checkpoints" / ".tmp-discard-k1ll3d"]
    for path in planted:
        if "archive" in path.name or "epoch" in path.name or "discard" in path.name:
            (path / "inner").mkdir(parents=True)
            (path / "inner" / "weights.safetensors").write_bytes(b"half a file")
        else:
            path.write_bytes(b"half a file")
    result = run_cli("train", str(config), "-s", str(run), *PLUGIN, "--recover")  # the last checkpoint: archive only
    assert result.returncode == 0, result.stderr
    assert not [path for path in planted if path.exists()]
    assert not list(run.rglob(".tmp*"))
    assert_same_weights(reference, run)


def test_a_cache_build_removes_the_folder_of_a_build_that_died(tmp_path):
    from distrain.data.cache import DatasetCache

    cache = DatasetCache(tmp_path)
    dead = tmp_path / ".0123abcd.99999.tmp"  # what a build killed with kill -9 leaves
    (dead / "train").mkdir(parents=True)
    other = tmp_path / ".fedc4321.99999.tmp"  # another entry's: not this build's to judge

    def build(folder: Path) -> dict:
        folder.mkdir(parents=True)
        (folder / "data.bin").write_bytes(b"12345")
        return {"splits": {}}

    other.mkdir()
    entry, built = cache.open("0123abcd", build)
    assert built and (entry / "data.bin").read_bytes() == b"12345"
    assert not dead.exists() and other.exists()


def test_the_temporary_folder_of_a_killed_command_is_removed_by_the_next_command():
    base = Path(tempfile.mkdtemp(prefix="scratch-"))  # short: the fork server's socket path lives under it
    environment = {"PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(base)}
    try:
        killed = subprocess.run(
            [sys.executable, "-c", "import os, tempfile; from distrain.runtime.scratch import use_job_scratch; "
             "folder = use_job_scratch(); print(folder, flush=True); tempfile.mkstemp(); os.kill(os.getpid(), 9)"],
            capture_output=True, text=True, env=environment, timeout=60)
        assert killed.returncode == -signal.SIGKILL
        left = Path(killed.stdout.strip())
        assert left.parent == base and len(list(left.iterdir())) == 1

        listed = run_cli("cache", "list", env={**environment, "DISTRAIN_CACHE": str(base / "cache")}, timeout=120)
        assert listed.returncode == 0, listed.stderr
        assert not left.exists()
        assert [path.name for path in base.iterdir() if path.name.startswith("distrain-job-")] == []  # its own too
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_history_line_the_disk_takes_only_in_part_is_cut_off_again(tmp_path):
    """A file size limit stands in for a disk that fills mid-line: every line left is whole."""
    program = ("import resource, sys; from distrain.job import history; "
               "resource.setrlimit(resource.RLIMIT_FSIZE, (150, 150)); "
               "[history.record(sys.argv[1], 'resumed', checkpoint='epoch_0001_batch_00000004', step=step) "
               "for step in range(5)]")
    result = subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "src")}, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "history.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["step"] == 0  # the second line did not fit whole
