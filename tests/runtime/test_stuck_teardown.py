"""A worker that stops on an error exits within its grace even when its teardown is stuck, so the job ends with
the worker's one line instead of hanging beside it (found by scripts/chaos.py: a DDP worker stopped on a full
disk and never exited)."""

from __future__ import annotations

import time

import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl

#: a worker's teardown as a user's run starts it: from the fork server (tests/support/cli.py)
pytestmark = pytest.mark.default_start_method

#: rank 0 cannot write its first epoch's metrics, and then its exit hangs
STUCK_PLUGIN = '''
import time
import distrain.runtime.spawn as spawn
import distrain.training.trainer as trainer
from distrain.job.disk import not_writable

def refused(path, text):
    spawn.shutdown_worker = lambda: time.sleep(3600)  # and the worker's teardown will never end (rank 1 waits)
    raise not_writable(path, "No space left on device")

trainer.write_text_atomically = refused
'''


def test_a_worker_stopped_on_an_error_exits_though_its_teardown_hangs(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "stuck_teardown.py").write_text(STUCK_PLUGIN)
    data = {"train": write_jsonl(tmp_path / "train.jsonl", sentiment_records(32, seed=1)),
            "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(16, seed=2))}
    config = {**text_config(data), "distributed": {"cuda_devices": [-1, -1]}}
    started = time.monotonic()
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"),
                     "--include-package", "stuck_teardown", timeout=60, cwd=tmp_path / "plugins")
    assert result.returncode == 1, result.stderr[-3000:]
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: cannot write {tmp_path / 'run' / 'metrics_epoch_0.json'}: No space left on device; free space, "
        "then resume with --recover")
    assert time.monotonic() - started < 90
