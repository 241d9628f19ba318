"""Test components for self-healing runs: a callback that SIGKILLs the rank-1 worker at chosen steps
(each step once, remembered in marker files, so a restarted run passes it), a model that sleeps
forever on rank 1 at its third forward pass, and one that raises a data error on rank 1."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import torch.distributed as dist

from distrain.data.reader import DataError
from distrain.models.basic_classifier import BasicClassifier
from distrain.models.model import Model
from distrain.training.callback import Callback


def _rank() -> int:
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


@Callback.register("test_kill_rank_one")
class KillRankOne(Callback):
    """``DISTRAIN_TEST_KILL_STEPS=3,11`` and ``DISTRAIN_TEST_KILL_MARKERS=DIR``: after each of those
    optimizer steps (the first time it is reached) the rank-1 worker SIGKILLs itself."""

    def on_step(self, trainer, step, loss) -> None:
        if trainer.world.rank != 1:
            return
        steps = [int(s) for s in os.environ.get("DISTRAIN_TEST_KILL_STEPS", "").split(",") if s]
        marker = Path(os.environ.get("DISTRAIN_TEST_KILL_MARKERS", ".")) / f"killed_at_{step}"
        if step in steps and not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)


@Model.register("test_sleeps_on_rank_one")
class SleepsOnRankOne(BasicClassifier):
    forward_calls = 0

    def forward(self, **inputs):
        self.forward_calls += 1
        if _rank() == 1 and self.forward_calls == 3:
            while True:
                time.sleep(3600)  # SLEEPING LINE: the hang the watchdog must show
        return super().forward(**inputs)


@Model.register("test_bad_input_on_rank_one")
class BadInputOnRankOne(BasicClassifier):
    forward_calls = 0

    def forward(self, **inputs):
        self.forward_calls += 1
        if _rank() == 1 and self.forward_calls == 2:
            raise DataError("train.jsonl:7: deliberate bad record")
        return super().forward(**inputs)
