"""Pure pieces of the self-healing features: prune choices, size and duration flags, hang messages,
disk-error causes and which failures restart."""

from __future__ import annotations

import errno
import json

import pytest

from distrain.commands.cache import choose, parse_duration, parse_size
from distrain.runtime.launch import restart_cause
from distrain.runtime.spawn import WorkerFailed
from distrain.runtime.watchdog import hang_message
from distrain.errors import UsageError
from distrain.job.disk import OutputNotWritable, disk_cause
from distrain.job.stop import Preempted
from distrain.data.reader import DataError


def test_prune_takes_old_entries_then_least_recently_used_beyond_the_size_never_one_in_use():
    now = 1_000_000.0
    entries = [{"key": "old", "size": 10, "last_used": now - 40 * 86400, "in_use": False},
               {"key": "busy", "size": 50, "last_used": now - 20 * 86400, "in_use": True},
               {"key": "mid", "size": 30, "last_used": now - 10 * 86400, "in_use": False},
               {"key": "new", "size": 30, "last_used": now - 1, "in_use": False}]
    assert [e["key"] for e in choose(entries, now, 30 * 86400, None)] == ["old"]
    assert [e["key"] for e in choose(entries, now, None, 85)] == ["old", "busy", "mid"]  # busy: reported as kept
    assert [e["key"] for e in choose(entries, now, None, 0)] == ["old", "busy", "mid", "new"]
    assert choose(entries, now, None, 1000) == []


def test_sizes_and_durations_parse_and_bad_ones_are_usage_errors():
    assert parse_size("20G") == 20 << 30 and parse_size("500m") == 500 << 20 and parse_size("1.5GiB") == 3 << 29
    assert parse_duration("30d") == 30 * 86400 and parse_duration("12h") == 43200
    for bad in ("lots", "-1G"):
        with pytest.raises(UsageError):
            parse_size(bad)
    with pytest.raises(UsageError):
        parse_duration("30")


def test_hang_message_names_the_ranks_that_did_not_arrive(tmp_path):
    assert hang_message(tmp_path, 20) is None
    (tmp_path / "rank0.json").write_text(json.dumps(
        {"rank": 0, "function": "_engine_run_backward", "file": "graph.py", "line": 1, "waiting": True}))
    (tmp_path / "rank1.json").write_text(json.dumps(
        {"rank": 1, "function": "forward", "file": "model.py", "line": 42, "waiting": False}))
    message = hang_message(tmp_path, 20)
    assert message.startswith("hang: no progress for 20 s; did not arrive: rank 1 in forward (model.py:42)")
    assert "waiting in a collective: rank 0 (_engine_run_backward)" in message


def test_disk_causes_come_from_the_errno_or_the_writer_message():
    assert disk_cause(OSError(errno.ENOSPC, "x")) == "No space left on device"
    assert disk_cause(OSError(errno.EROFS, "x")) == "Read-only file system"
    assert disk_cause(RuntimeError("Error while serializing: I/O error: File too large (os error 27)")) == "File too large"
    assert disk_cause(RuntimeError("Disk quota exceeded")) == "Disk quota exceeded"
    assert disk_cause(ValueError("bad value")) is None and disk_cause(OSError(errno.ENOENT, "x")) is None


def test_only_lost_workers_restart():
    assert restart_cause(WorkerFailed("worker rank 1 was killed by SIGKILL\nmore")) == "worker rank 1 was killed by SIGKILL"
    assert restart_cause(DataError("train.jsonl:3: bad")) is None
    assert restart_cause(Preempted("stopped by SIGTERM")) is None
    assert restart_cause(OutputNotWritable("cannot write x: No space left on device")) is None


def test_a_full_disk_inside_torchs_sharded_checkpoint_writer_names_the_checkpoint_folder():
    """torch.distributed.checkpoint raises a BaseException holding each rank's OSError."""
    from torch.distributed.checkpoint.api import CheckpointException

    from distrain.job.disk import writing

    with pytest.raises(OutputNotWritable) as raised:
        with writing("/runs/x/checkpoints/epoch_0001_batch_00000004", names_what_failed=True):
            raise CheckpointException("save", {0: (OSError(errno.ENOSPC, "No space left on device"), None)})
    assert str(raised.value) == ("cannot write /runs/x/checkpoints/epoch_0001_batch_00000004: No space left on device; "
                                 "free space, then resume with --recover")
    with pytest.raises(KeyboardInterrupt):  # anything that is no disk problem goes through untouched
        with writing("/runs/x/metrics.json"):
            raise KeyboardInterrupt
