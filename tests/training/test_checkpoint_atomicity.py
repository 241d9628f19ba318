"""A process killed at any moment while writing checkpoints leaves a latest checkpoint that loads."""

from __future__ import annotations

import os
import random
import signal
import time

import torch

from distrain.training import random_state
from distrain.training.checkpointing import CheckpointFolders, load_training_state, load_weights


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


def _write_checkpoints_forever(checkpointer: CheckpointFolders, model: torch.nn.Module, first_step: int) -> None:
    step = first_step
    while True:
        with torch.no_grad():
            model.weight.fill_(step)
        checkpointer.save(0, step, model.state_dict(), _state(step, model))
        step += 1


def test_kill_during_checkpoint_writing_always_leaves_a_loadable_latest(tmp_path):
    checkpointer = CheckpointFolders(tmp_path / "checkpoints", keep=2)
    model = torch.nn.Linear(128, 128)  # small enough that no op runs on a thread pool (fork-safe)
    with torch.no_grad():
        model.weight.fill_(0)
    checkpointer.save(0, 0, model.state_dict(), _state(0, model))  # also imports what writing needs, before forking
    interrupted_writes = 0
    kill_after = random.Random(18)  # seeded: the same kill moments on every run
    for attempt in range(25):
        latest = checkpointer.latest()
        first_step = load_training_state(latest)["step"] + 1 if latest else 0
        child = os.fork()
        if child == 0:  # the writer: a real process using the real CheckpointFolders, killed below
            try:
                torch.set_num_threads(1)  # the parent's thread pool does not survive fork
                _write_checkpoints_forever(checkpointer, model, first_step)
            finally:
                os._exit(0)
        time.sleep(kill_after.uniform(0.01, 0.25))  # the child writes meanwhile
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        interrupted_writes += any(p.name.startswith(".tmp-") for p in checkpointer.directory.iterdir())

        latest = checkpointer.latest()
        if latest is None:
            continue
        state = load_training_state(latest)
        restored = torch.nn.Linear(128, 128)
        load_weights(restored, latest / "model.safetensors")
        assert state["step"] == state["position"]["batches"], f"attempt {attempt}: {latest.name}"
        assert torch.all(restored.weight == state["step"]), f"attempt {attempt}: weights and state disagree"
        assert len(checkpointer.checkpoints()) <= 3  # keep 2, plus one being replaced at most
    assert checkpointer.latest() is not None
    assert interrupted_writes >= 3, "too few kills landed while a checkpoint was being written"
