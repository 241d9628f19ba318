"""A process killed at any moment while writing checkpoints leaves a latest checkpoint that loads.

The kill moments are seeded points of the writer's own execution, not times: the writer counts the steps it
takes (every line and every call into C) inside the checkpoint-writing code, ``distrain/training/checkpointing.py``
and ``distrain/job/disk.py``, and ``kill -9``s itself at the N-th. The same N lands at the same place on any
machine however loaded, and every kill lands inside a write.
"""

from __future__ import annotations

import os
import random
import signal
import sys

import torch

from distrain.job import disk
from distrain.training import checkpointing, random_state
from distrain.training.checkpointing import CheckpointFolders, load_training_state, load_weights

WRITING_CODE = {checkpointing.__file__, disk.__file__}


def _state(step: int, model: torch.nn.Module) -> dict:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return {
        "format": 1,
        "position": {"epoch": 0, "batches": step},
        "step": step,
        "world_size": 1,
        "optimizer": optimizer.state_dict(),
        "ranks": [{"rng": random_state.capture(), "loss_sum": torch.tensor(float(step), dtype=torch.float64)}],
    }


def _write_checkpoints(checkpointer: CheckpointFolders, model: torch.nn.Module, first_step: int, count: int) -> None:
    for step in range(first_step, first_step + count):
        with torch.no_grad():
            model.weight.fill_(step)
        checkpointer.save(0, step, model.state_dict(), _state(step, model))


def _counting_writing_steps(then=None):
    """A profiler that counts each line run and each C call made in the writing code and calls ``then(count)``
    at each; returned with the count so far. Lines are seen through a trace function on those frames only."""
    count = [0]

    def step():
        count[0] += 1
        if then is not None:
            then(count[0])

    def lines(frame, event, arg):
        if event == "line":
            step()
        return lines

    def profile(frame, event, arg):
        if frame.f_code.co_filename in WRITING_CODE:
            if event == "c_call":
                step()
            elif event == "call":
                frame.f_trace = lines
                frame.f_trace_lines = True

    return profile, count


def test_kill_during_checkpoint_writing_always_leaves_a_loadable_latest(tmp_path):
    checkpointer = CheckpointFolders(tmp_path / "checkpoints", keep=2)
    model = torch.nn.Linear(128, 128)  # small enough that no op runs on a thread pool (fork-safe)
    with torch.no_grad():
        model.weight.fill_(0)
    checkpointer.save(0, 0, model.state_dict(), _state(0, model))  # also imports what writing needs, before forking
    # how many steps one save takes, here, with a checkpoint to prune: the range the kill points are drawn from
    profile, counted = _counting_writing_steps()
    sys.settrace(lambda *_: None)
    sys.setprofile(profile)
    try:
        _write_checkpoints(checkpointer, model, 1, 3)
    finally:
        sys.setprofile(None)
        sys.settrace(None)
    per_save = counted[0] // 3
    assert per_save > 20, per_save
    interrupted_writes = 0
    kill_points = random.Random(18)  # seeded: the same kill points on every run and machine
    for attempt in range(25):
        latest = checkpointer.latest()
        first_step = load_training_state(latest)["step"] + 1 if latest else 0
        kill_at = kill_points.randint(1, 2 * per_save)  # inside the first or the second save
        before = len(checkpointer.checkpoints())
        child = os.fork()
        if child == 0:  # the writer: a real process using the real CheckpointFolders, killed at its kill point
            try:
                torch.set_num_threads(1)  # the parent's thread pool does not survive fork

                def die_at(count: int) -> None:
                    if count == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)

                profile, _ = _counting_writing_steps(die_at)
                sys.settrace(lambda *_: None)  # tracing on, so that profile may give frames their line tracer
                sys.setprofile(profile)
                _write_checkpoints(checkpointer, model, first_step, 3)
            finally:
                os._exit(0)
        _, status = os.waitpid(child, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, f"attempt {attempt}: not killed"
        interrupted_writes += any(p.name.startswith(".tmp-") for p in checkpointer.directory.iterdir())

        latest = checkpointer.latest()
        if latest is None:
            continue
        state = load_training_state(latest)
        restored = torch.nn.Linear(128, 128)
        load_weights(restored, latest / "model.safetensors")
        assert state["step"] == state["position"]["batches"], f"attempt {attempt}: {latest.name}"
        assert torch.all(restored.weight == state["step"]), f"attempt {attempt}: weights and state disagree"
        # a save that completes prunes to 2; one killed after its rename, before its pruning, adds one
        assert len(checkpointer.checkpoints()) <= max(before, 2) + 1, f"attempt {attempt}"
    assert interrupted_writes >= 3, "too few kills landed while a checkpoint was being written"
    latest = checkpointer.latest()
    step = load_training_state(latest)["step"] + 1
    _write_checkpoints(checkpointer, model, step, 1)  # one save left alone: what the kills left is pruned away
    assert [path.name for path in checkpointer.checkpoints()] == [latest.name, checkpointer.name(0, step)]
    assert not [path for path in checkpointer.directory.iterdir() if path.name.startswith(".tmp-")]
