"""When the data-parallel workers agree on the model: every step (gradients) or every few steps (parameters).

A sync mode is reached only through the parallel model (its step hooks), which calls it around each optimizer
step; the trainer never learns which one is configured. ``every_step`` (the default) is the
synchronous algorithm: DDP or FSDP all-reduces gradients during backward and this object only
counts what that moved. ``local_sgd`` and ``diloco`` (in :mod:`distrain.distributed.syncs`) let each
worker step on its own slice and average parameters every ``sync_every`` optimizer steps; they
change the algorithm on purpose and equal the synchronous run at ``sync_every: 1`` (SGD).

Every mode counts its synchronisations and the bytes they moved in the current epoch; the trainer
puts them in ``metrics.json`` as ``sync_count`` and ``sync_bytes``.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch

from distrain.distributed.world import SINGLE, World
from distrain.registry import Registrable


class SyncMode(Registrable):
    """Base class; the default, ``every_step``, averages gradients in every optimizer step."""

    default_implementation = "every_step"
    runtime_args = ("world",)
    #: whether gradients are all-reduced in backward (``apply_ddp`` wraps the model for it)
    averages_gradients = True
    #: whether workers hold state of their own between synchronisations (checkpointed per rank)
    has_rank_state = False

    def __init__(self, world: World = SINGLE) -> None:
        self.world = world
        self.model: torch.nn.Module | None = None
        self.sync_count = 0
        self.sync_bytes = 0
        #: bytes one gradient synchronisation moves per worker (set by ``attach``)
        self.bytes_per_step = 0
        #: bytes a compression hook reported sending since the last step (None: no hook counts)
        self.measured: int | None = None

    def attach(self, model: torch.nn.Module) -> None:
        """The (unwrapped) model whose parameters this mode keeps in agreement."""
        self.model = model
        self.bytes_per_step = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)

    def before_step(self, parameters: Iterable[torch.nn.Parameter], local_weight: Any, total_weight: Any) -> None:
        """Gradients are ready; ``local_weight`` of ``total_weight`` (samples, or loss weight) were this worker's."""

    def after_step(self, step: int, local_weight: Any) -> None:
        """Optimizer step number ``step`` (global, counted from the start of training) was taken."""
        if self.world.is_distributed:
            self.count(self.bytes_per_step if self.measured is None else self.measured)
            self.measured = None if self.measured is None else 0

    def moved(self, sent: int) -> None:
        """A communication hook sent ``sent`` bytes for the current step."""
        self.measured = (self.measured or 0) + int(sent)

    def end_epoch(self) -> None:
        """The epoch's last step was taken: the workers' models must agree now."""

    def count(self, moved: int) -> None:
        self.sync_count += 1
        self.sync_bytes += int(moved)

    def take_counters(self) -> dict[str, int]:
        """This epoch's ``sync_count`` and ``sync_bytes`` (then zero for the next epoch)."""
        counters = {"sync_count": self.sync_count, "sync_bytes": self.sync_bytes}
        self.sync_count = self.sync_bytes = 0
        return counters

    # ------------------------------------------------------------------------ checkpointed state
    def state_dict(self) -> dict[str, Any]:
        """What every worker shares (saved once)."""
        return {"sync_count": self.sync_count, "sync_bytes": self.sync_bytes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.sync_count = int(state.get("sync_count", 0))
        self.sync_bytes = int(state.get("sync_bytes", 0))

    def rank_state_dict(self, optimizer: torch.optim.Optimizer) -> dict[str, Any] | None:
        """What differs between workers (saved for each); None when nothing does."""
        return None

    def load_rank_state_dict(self, optimizer: torch.optim.Optimizer, state: dict[str, Any] | None) -> None:
        pass


@SyncMode.register("every_step")
class EveryStep(SyncMode):
    """Gradients are averaged during every step's backward (synchronous data parallelism)."""
