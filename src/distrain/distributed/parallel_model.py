"""The handle the trainer steps a parallelized model through (what :func:`~distrain.training.parallelize.parallelize`
returns): skip gradient synchronisation on accumulation micro-steps, clip by the global norm whatever
the layout, take and give the model and optimizer state on every rank, and the step hooks of the sync
mode and the automatic balance. It composes what the strategy handed back (:class:`~distrain.distributed.applied.Applied`)
with how step 1 split the model (:class:`~distrain.distributed.applied.Split`) and names no strategy; the
trainer calls it and never names DDP, FSDP or a process group.
"""

from __future__ import annotations

from typing import Any, ContextManager, Iterable

import torch

from distrain.distributed.applied import Applied, Split
from distrain.distributed.auto_shares import AutomaticShares
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.sync import SyncMode
from distrain.distributed.world import World


class ParallelModel:
    """``applied``: what the strategy made of ``model`` (the model whose parameters are the optimizer's);
    ``module`` is what forward is called on. ``split``: how step 1 split it (its holding and clipping,
    where it split, stand over the strategy's: they cover whatever the strategy wrapped around the parts)."""

    def __init__(self, applied: Applied, model: torch.nn.Module, world: World, dims: ParallelDims,
                 sync: SyncMode, balancer: AutomaticShares | None = None, *, split: Split | None = None,
                 forward_is_collective: bool = False) -> None:
        split = split or Split()
        self.module, self.model, self.world, self.dims = applied.module, model, world, dims
        self.sync, self.balancer = sync, balancer
        #: evaluation forwards a worker's placeholder slices too (sharded forwards are collectives)
        self.forward_is_collective = forward_is_collective
        #: how the model is split, for ``distrain check`` (tensor-parallel layers, pipeline stages)
        self.described = split.described
        self.holding = split.holding or applied.holding
        self._no_sync = applied.no_sync
        self._clip = split.clip_grad_norm or applied.clip_grad_norm
        self._reduce_gradients = applied.reduce_gradients
        #: checkpointed state shared by every worker
        self.shared_parts: dict[str, Any] = {"sync": sync, **({"shares": balancer} if balancer is not None else {})}

    def no_sync(self) -> ContextManager[None]:
        """Gradients computed inside are not synchronised yet (an accumulation micro-step)."""
        return self._no_sync()

    def clip_grad_norm(self, parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
        """Clip by the norm of the whole model's gradients, whichever rank holds each part."""
        return self._clip(list(parameters), max_norm)

    def model_state_dict(self) -> dict[str, torch.Tensor]:
        """The full model state on rank 0 (a collective under sharding or splitting: call it on every rank)."""
        return self.holding.model_state_dict(self.model, self.world, self.dims)

    def load_model_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.holding.load_model_state_dict(self.model, state)

    def optimizer_state_dict(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        return self.holding.optimizer_state_dict(self.model, optimizer, self.world, self.dims)

    def load_optimizer_state_dict(self, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
        self.holding.load_optimizer_state_dict(self.model, optimizer, state)

    def before_optimizer_step(self, parameters: Iterable[torch.nn.Parameter], local_weight: Any,
                              total_weight: Any) -> None:
        """Gradients are ready; ``local_weight`` of the step's ``total_weight`` were this worker's."""
        parameters = list(parameters)
        if self._reduce_gradients is not None:
            self._reduce_gradients(parameters)
        self.sync.before_step(parameters, local_weight, total_weight)

    def after_optimizer_step(self, step: int, local_weight: Any) -> None:
        """Global optimizer step ``step`` was taken (a sync point for parameter-averaging modes)."""
        self.sync.after_step(step, local_weight)
        if self.balancer is not None:
            self.balancer.after_step(step, local_weight)

    def end_epoch(self) -> None:
        self.sync.end_epoch()

    def epoch_counters(self) -> dict[str, int]:
        """This epoch's synchronisations and the bytes they moved (none on one process), and with
        an automatic balance each worker's speed and share."""
        counters = self.sync.take_counters()
        if self.balancer is not None:
            counters |= self.balancer.report()
        return counters if self.world.is_distributed else {}

    def rank_parts(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """Checkpointed state of each worker's own (parameters and optimizer between averages)."""
        if not self.sync.has_rank_state:
            return {}
        return {"sync": _SyncRankState(self.sync, optimizer)}


class _SyncRankState:
    def __init__(self, sync: SyncMode, optimizer: torch.optim.Optimizer) -> None:
        self.sync = sync
        self.optimizer = optimizer

    def state_dict(self) -> dict[str, Any] | None:
        return self.sync.rank_state_dict(self.optimizer)

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        self.sync.load_rank_state_dict(self.optimizer, state)

