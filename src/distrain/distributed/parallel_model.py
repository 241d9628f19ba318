"""The handle the trainer steps a parallelized model through (what :func:`~distrain.training.parallelize.parallelize`
returns): skip gradient synchronisation on accumulation micro-steps, clip by the global norm whatever
the layout, take and give the model and optimizer state on every rank, and the step hooks of the sync
mode and the automatic balance. The trainer calls these and never names DDP, FSDP or a process group.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable, Iterator

import torch

from distrain.distributed import model_state
from distrain.distributed.auto_shares import AutomaticShares
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.sync import SyncMode
from distrain.distributed.world import World


class ParallelModel:
    """``module`` is what forward is called on; ``model`` the model it wraps (its parameters are the
    optimizer's). ``wrapped``: the DDP module whose ``no_sync`` defers gradient averaging (None: none);
    ``sharded``: FSDP shards it; ``replicas``: the group that averages a split model's gradients after
    backward; ``pipeline_group``: the stages' group (a pipelined model's norm sums over it)."""

    def __init__(self, module: torch.nn.Module, model: torch.nn.Module, world: World, dims: ParallelDims,
                 sync: SyncMode, balancer: AutomaticShares | None = None, *, wrapped: torch.nn.Module | None = None,
                 sharded: bool = False, replicas: Any = None, pipeline_group: Any = None,
                 forward_is_collective: bool = False, described: list[str] | None = None) -> None:
        self.module, self.model, self.world, self.dims = module, model, world, dims
        self.sync, self.balancer = sync, balancer
        self.wrapped, self.sharded, self.replicas, self.pipeline_group = wrapped, sharded, replicas, pipeline_group
        #: evaluation forwards a worker's placeholder slices too (sharded forwards are collectives)
        self.forward_is_collective = forward_is_collective
        #: how the model is split, for ``distrain check`` (tensor-parallel layers, pipeline stages)
        self.described = described or []
        self.holding: model_state.Holding = (
            "stages" if dims.pp > 1 else "gathered" if dims.tp > 1 or sharded else "whole")
        #: checkpointed state shared by every worker
        self.shared_parts: dict[str, Any] = {"sync": sync, **({"shares": balancer} if balancer is not None else {})}

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Gradients computed inside are not synchronised yet (an accumulation micro-step)."""
        if self.sharded:
            self.model.set_requires_gradient_sync(False)
            try:
                yield
            finally:
                self.model.set_requires_gradient_sync(True)
        elif self.wrapped is not None:
            with self.wrapped.no_sync():
                yield
        else:
            yield

    def clip_grad_norm(self, parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
        """Clip by the norm of the whole model's gradients, whichever rank holds each part."""
        if self.dims.pp > 1:
            from distrain.distributed.pipeline import clip_grad_norm_over_stages

            return clip_grad_norm_over_stages(parameters, max_norm, self.pipeline_group)
        if self.dims.tp > 1:  # split layers (DTensors, on the tp or dp x tp mesh) beside whole ones
            from distrain.distributed.tensor_parallel import clip_grad_norm

            return clip_grad_norm(parameters, max_norm)
        if self.sharded:
            from distrain.distributed.strategies.fsdp import clip_sharded_grad_norm

            return clip_sharded_grad_norm(parameters, max_norm)
        parameters = [parameter for parameter in parameters if parameter.grad is not None]
        if any(parameter.grad.is_sparse for parameter in parameters):
            return clip_sparse_grad_norm(parameters, max_norm)
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm)

    def model_state_dict(self) -> dict[str, torch.Tensor]:
        """The full model state on rank 0 (a collective under sharding or splitting: call it on every rank)."""
        return model_state.model_state_dict(self.model, self.holding, self.world, self.dims)

    def load_model_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        model_state.load_model_state_dict(self.model, state, self.holding)

    def optimizer_state_dict(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        return model_state.optimizer_state_dict(self.model, optimizer, self.holding, self.world, self.dims)

    def load_optimizer_state_dict(self, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
        model_state.load_optimizer_state_dict(self.model, optimizer, state, self.holding)

    def before_optimizer_step(self, parameters: Iterable[torch.nn.Parameter], local_weight: Any,
                              total_weight: Any) -> None:
        """Gradients are ready; ``local_weight`` of the step's ``total_weight`` were this worker's."""
        if self.replicas is not None:
            from distrain.distributed.strategies.ddp import average_gradients

            parameters = list(parameters)
            average_gradients(parameters, self.replicas, self.dims.dp_size)
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


def clip_sparse_grad_norm(parameters: list[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """torch's ``clip_grad_norm_`` cannot take the norm of sparse gradients (``sparse: true`` embeddings,
    AllenNLP's ``dense_sparse_adam``): as AllenNLP did, a sparse gradient counts by its coalesced values."""
    norms = [(parameter.grad.coalesce()._values() if parameter.grad.is_sparse else parameter.grad).detach().norm(2)
             for parameter in parameters]
    total = torch.stack(norms).norm(2) if norms else torch.tensor(0.0)
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for parameter in parameters:
        if parameter.grad.is_sparse:
            parameter.grad = parameter.grad.coalesce() * scale
        else:
            parameter.grad.detach().mul_(scale)
    return total
