"""Replicate the model on every worker and average gradients (PyTorch DistributedDataParallel)."""

from __future__ import annotations

import contextlib
from typing import Annotated, Iterator

import torch
from annotated_types import Gt

from distrain.distributed.compression import GradientCompression
from distrain.distributed.strategy import ParallelStrategy
from distrain.distributed.world import SINGLE, World


@ParallelStrategy.register("ddp")
class DistributedDataParallelStrategy(ParallelStrategy):
    """Every worker holds the whole model; gradients are all-reduced in buckets during backward.

    ``gradient_as_bucket_view`` lets gradients live in the communication buckets (no copy per step);
    ``static_graph`` tells DDP the set of used parameters never changes, so it can skip per-step
    bookkeeping; ``bucket_cap_mb`` is the size of each all-reduce. On one process it wraps nothing.
    """

    replicates_parameters = True
    accepts_gradient_compression = True

    def __init__(
        self,
        world: World = SINGLE,
        bucket_cap_mb: Annotated[float, Gt(0)] = 25.0,
        gradient_as_bucket_view: bool = True,
        static_graph: bool = False,
        find_unused_parameters: bool = False,
    ) -> None:
        super().__init__(world)
        self.bucket_cap_mb = bucket_cap_mb
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.find_unused_parameters = find_unused_parameters
        self.wrapped: torch.nn.Module | None = None
        self.compression: GradientCompression | None = None
        #: with a split model: the data-parallel ranks each gradient is averaged over after backward
        self.gradient_group = None

    def model_init_context(self) -> contextlib.AbstractContextManager:
        if self.world.device == "cpu":
            from distrain.compat.host_memory import keep_step_memory

            keep_step_memory()  # every step frees and allocates the same activations (see host_memory)
        return super().model_init_context()

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        model = super().wrap(model)
        if self.splits_model:
            return self._wrap_split(model)
        # a dry run's model lives on the meta device, where DDP's constructor cannot verify shapes
        # (it reads them back as numbers); unwrapped, rank 0 still holds exactly its parameters
        if not self.world.is_distributed or any(p.is_meta for p in model.parameters()):
            self.wrapped = model
            return model
        if not self.sync.averages_gradients:  # local SGD / DiLoCo: no gradient all-reduce at all
            _broadcast_from_first(model)
            self.wrapped = model
            return model
        from torch.nn.parallel import DistributedDataParallel

        from distrain.compat.deferred_compiler import defer_disabled_methods

        defer_disabled_methods(DistributedDataParallel)  # its forward need not import torch's compiler
        device = torch.device(self.world.device)
        self.wrapped = DistributedDataParallel(
            model,
            device_ids=[device.index] if device.type == "cuda" else None,
            bucket_cap_mb=self.bucket_cap_mb,
            gradient_as_bucket_view=self.gradient_as_bucket_view,
            static_graph=self.static_graph,
            find_unused_parameters=self.find_unused_parameters,
        )
        if self.compression is not None:
            self.compression.install(self.wrapped, self.sync.moved)
        return self.wrapped

    def _wrap_split(self, model: torch.nn.Module) -> torch.nn.Module:
        """A model split by tensor or pipeline parallelism holds parts of parameters (DTensors), which
        DDP's buckets do not take: the data-parallel ranks average each gradient after backward."""
        self.wrapped = model
        if self.layout.dp_size > 1:
            self.gradient_group = self.job_mesh()["dp_replicate"].get_group()
        return model

    def before_optimizer_step(self, parameters, local_weight, total_weight) -> None:
        group = self.gradient_group
        if group is not None:
            import torch.distributed as dist
            from torch.distributed.tensor import DTensor

            parameters = list(parameters)
            for p in parameters:  # a rank with an empty slice has no gradients: it adds zeros
                if p.grad is None and not p.is_meta and p.requires_grad:
                    p.grad = torch.zeros_like(p)
            grads = [p.grad.to_local() if isinstance(p.grad, DTensor) else p.grad
                     for p in parameters if p.grad is not None]
            if grads:
                flat = torch.cat([g.reshape(-1) for g in grads])
                dist.all_reduce(flat, group=group)
                flat /= self.layout.dp_size
                offset = 0
                for g in grads:
                    g.copy_(flat[offset:offset + g.numel()].view_as(g))
                    offset += g.numel()
        super().before_optimizer_step(parameters, local_weight, total_weight)

    def use_compression(self, compression: GradientCompression) -> None:
        """Set before :meth:`wrap`: how gradients are compressed on the wire."""
        self.compression = compression

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        if self.wrapped is not None and self.wrapped is not self.model:
            with self.wrapped.no_sync():
                yield
        else:
            yield


def _broadcast_from_first(model: torch.nn.Module) -> None:
    """Start every worker from rank 0's parameters and buffers (what DDP's constructor does)."""
    import torch.distributed as dist

    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            dist.broadcast(tensor.data, src=0)
