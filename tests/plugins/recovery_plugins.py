"""Test components for recovery tests: a callback that kills or marks the run at a chosen step,
and a classifier whose loss turns NaN at a chosen training step (on one rank, or on all)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import torch

from distrain.models.basic_classifier import BasicClassifier
from distrain.models.model import Model
from distrain.training.callback import Callback


@Callback.register("test_kill_switch")
class KillSwitch(Callback):
    """``DISTRAIN_TEST_KILL_AT_STEP=k``: SIGKILL the whole process group after optimizer step k.
    ``DISTRAIN_TEST_MARK_AT_STEP=k`` with ``DISTRAIN_TEST_MARKER=path``: create that file instead and
    wait (up to 60 s) for the stop signal the test then sends, so the step it arrives at is known."""

    def on_step(self, trainer, step, loss) -> None:
        if not trainer.world.is_primary:
            return
        if os.environ.get("DISTRAIN_TEST_KILL_AT_STEP") == str(step):
            os.killpg(os.getpgid(0), signal.SIGKILL)
        if os.environ.get("DISTRAIN_TEST_MARK_AT_STEP") == str(step):
            Path(os.environ["DISTRAIN_TEST_MARKER"]).write_text(str(step))
            deadline = time.monotonic() + 60
            while not trainer.stop_requested and time.monotonic() < deadline:
                time.sleep(0.01)


@Model.register("test_nan_classifier")
class NanClassifier(BasicClassifier):
    """A basic classifier whose training loss is NaN on its ``nan_at_step``-th training forward."""

    def __init__(self, nan_at_step: int, nan_rank: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.nan_at_step = nan_at_step
        self.nan_rank = nan_rank
        self.forwards = 0

    def forward(self, **inputs):
        output = super().forward(**inputs)
        if self.training:
            self.forwards += 1
            rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
            if self.forwards == self.nan_at_step and self.nan_rank in (None, rank):
                output["loss"] = output["loss"] * float("nan")
        return output


@Callback.register("test_fail_on_rank")
class FailOnRank(Callback):
    """``DISTRAIN_TEST_FAIL_RANK=r`` and ``DISTRAIN_TEST_FAIL_FROM_STEP=k``: the worker of global rank r raises
    after every optimizer step from k on, however often it is started (a device lost for good)."""

    def on_step(self, trainer, step, loss) -> None:
        rank, first = os.environ.get("DISTRAIN_TEST_FAIL_RANK"), os.environ.get("DISTRAIN_TEST_FAIL_FROM_STEP")
        if rank is not None and trainer.world.rank == int(rank) and step >= int(first or 1):
            raise RuntimeError(f"test: rank {rank} fails for good (step {step})")


@Callback.register("test_kill_node")
class KillNode(Callback):
    """``DISTRAIN_TEST_KILL_NODE_AT_STEP=k`` in one node's environment: after optimizer step k, SIGKILL the
    torchrun agent that started this worker (its parent), then the worker: the node is gone."""

    def on_step(self, trainer, step, loss) -> None:
        if os.environ.get("DISTRAIN_TEST_KILL_NODE_AT_STEP") == str(step):
            os.kill(os.getppid(), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)

