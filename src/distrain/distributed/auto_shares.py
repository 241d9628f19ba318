"""``"device_weights": "auto"``: measure each worker's speed and set its share of every global batch.

Each worker times its forward passes (on CUDA with a device synchronisation around each, the price of
an honest clock) and counts its samples. At the end of the calibration window and of every
re-balancing window after it (both counted in global optimizer steps, the same on every worker),
the workers exchange (seconds, samples) in one small all-reduce and all compute the same new shares
with :mod:`distrain.distributed.balance`; the training loader splits the next global batches by
them. The loss stays weighted by sample counts, so the updates are those of one process.
The shares are checkpointed; a resumed run starts from them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal

import torch
from annotated_types import Ge, Gt, Le

from distrain.distributed.balance import next_shares, proportional_shares
from distrain.distributed.world import World

logger = logging.getLogger(__name__)


@dataclass
class AutoBalance:
    """``{"type": "auto", ...}``: ``calibration_steps`` before the first shares, then a re-balance
    every ``rebalance_every`` steps from that window's mean speeds; a share moves by at most
    ``max_change`` of the global batch at a time and not at all when the change would be within
    ``tolerance`` of it."""

    type: Literal["auto"] = "auto"
    calibration_steps: Annotated[int, Ge(1)] = 5
    rebalance_every: Annotated[int, Ge(1)] = 20
    max_change: Annotated[float, Gt(0), Le(1)] = 0.25
    tolerance: Annotated[float, Ge(0), Le(1)] = 0.05


class AutomaticShares:
    """Times this worker's forwards and re-sets every worker's share of the training batches.

    ``clock`` is the one place time is read: a test plugin gives it simulated seconds, so the decisions are
    tested exactly rather than through sleeps that a busy machine stretches."""

    clock: Callable[[], float] = staticmethod(time.perf_counter)

    def __init__(self, world: World, settings: AutoBalance) -> None:
        self.world = world
        self.settings = settings
        self.loader: Any = None
        self.shares: list[int] | None = None
        self.seconds = 0.0
        self.samples = 0.0
        self.speeds: list[float] = []
        self._started: float | None = None
        self._cuda = torch.device(world.device).type == "cuda"

    # ----------------------------------------------------------------------------- wiring
    def attach(self, model: torch.nn.Module) -> None:
        model.register_forward_pre_hook(self._forward_starts)
        model.register_forward_hook(self._forward_ends)

    def use_loader(self, loader: Any) -> None:
        """The training loader whose global batches the shares split (its batch size is their sum)."""
        if not hasattr(loader, "use_shares"):
            from distrain.config.errors import ConfigError, Problem

            raise ConfigError([Problem("distributed.device_weights",
                                       "auto needs indexed loading; it cannot be used with data_loader.lazy")])
        self.loader = loader
        self._apply()

    def _forward_starts(self, module: Any, inputs: Any) -> None:
        if module.training:
            if self._cuda:
                torch.cuda.synchronize(self.world.device)
            self._started = self.clock()

    def _forward_ends(self, module: Any, inputs: Any, output: Any) -> None:
        if module.training and self._started is not None:
            if self._cuda:
                torch.cuda.synchronize(self.world.device)
            self.seconds += self.clock() - self._started
            self._started = None

    # --------------------------------------------------------------------------- decisions
    def after_step(self, step: int, local_samples: Any) -> None:
        self.samples += float(local_samples)
        calibration, every = self.settings.calibration_steps, self.settings.rebalance_every
        if step < calibration or (step - calibration) % every:
            return
        seconds_per_sample = self._exchange()
        self.seconds = self.samples = 0.0
        if seconds_per_sample is None:
            return
        self.speeds = [1.0 / value for value in seconds_per_sample]
        total = self.loader.sampler.batch_size
        if self.shares is None or step == calibration:
            shares = proportional_shares(self.speeds, total)
        else:
            shares = next_shares(self.shares, seconds_per_sample, self.settings.max_change, self.settings.tolerance)
        if shares != self.shares and self.world.is_primary:
            logger.info("balance at step %d: examples/s per worker %s -> shares %s", step,
                        [round(speed, 1) for speed in self.speeds], shares)
        self.shares = shares
        self._apply()

    def _exchange(self) -> list[float] | None:
        """Every worker's seconds per sample in the window just ended (None if one trained on nothing)."""
        from distrain.distributed.collectives import all_reduce_sum

        mine = torch.zeros(2 * self.world.dp_size, dtype=torch.float64)
        mine[self.world.dp_rank] = self.seconds
        mine[self.world.dp_size + self.world.dp_rank] = self.samples
        if self.world.dp_rank != self.world.rank or self.world.dp_size != self.world.size:
            mine /= self.world.size // self.world.dp_size  # replicas of one data-parallel rank report alike
        both = all_reduce_sum(mine).tolist()
        seconds, samples = both[: self.world.dp_size], both[self.world.dp_size :]
        if min(samples) <= 0 or min(seconds) <= 0:
            return None
        return [s / n for s, n in zip(seconds, samples)]

    def _apply(self) -> None:
        if self.loader is not None and self.shares is not None:
            self.loader.use_shares(tuple(float(share) for share in self.shares))

    def report(self) -> dict[str, Any]:
        """Per-worker examples/s (forward compute), throughput relative to the fastest (HetSeq's
        figure of merit) and shares, from the latest window."""
        if not self.speeds:
            return {}
        fastest = max(self.speeds)
        return {
            "worker_examples_per_s": [round(speed, 3) for speed in self.speeds],
            "worker_relative_throughput": [round(speed / fastest, 4) for speed in self.speeds],
            "worker_shares": list(self.shares or []),
        }

    def state_dict(self) -> dict[str, Any]:
        return {"shares": list(self.shares) if self.shares else None, "speeds": list(self.speeds)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        saved = state.get("shares")
        if saved is not None and len(saved) == self.world.dp_size:
            self.shares = [int(share) for share in saved]
            self.speeds = [float(speed) for speed in state.get("speeds", [])]
            self._apply()
            if self.world.is_primary:
                logger.info("balance resumed with the checkpoint's shares %s", self.shares)
