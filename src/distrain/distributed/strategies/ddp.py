"""Replicate the model on every worker and average gradients (PyTorch DistributedDataParallel)."""

from __future__ import annotations

import contextlib
from functools import partial
from typing import Annotated, Any, Iterable

import torch
from annotated_types import Gt

from distrain.distributed.applied import Applied
from distrain.distributed.compression import GradientCompression
from distrain.distributed.strategy import Parallelism, ParallelStrategy
from distrain.distributed.sync import SyncMode
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
    imports_compiler = False  # DistributedDataParallel's forward need not import it (deferred_compiler)

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

    def model_init_context(self, dims=None) -> contextlib.AbstractContextManager:
        """Sets glibc's heap for a CPU worker: every step frees and allocates the same activations."""
        if self.world.device == "cpu":
            from distrain.compat.host_memory import keep_step_memory

            keep_step_memory()  # see host_memory
        return super().model_init_context(dims)

    def dry_run_notes(self) -> list[str]:
        if self.gradient_as_bucket_view:
            return []
        return ["gradient_as_bucket_view is off: DDP keeps another copy of the gradients in its buckets"]

    def apply(self, model: torch.nn.Module, mesh: Any, parallelism: Parallelism) -> Applied:
        return apply_ddp(model, mesh, self, parallelism.world, parallelism.sync, parallelism.compression)


def apply_ddp(model: torch.nn.Module, mesh: Any, options: DistributedDataParallelStrategy, world: World,
              sync: SyncMode, compression: GradientCompression | None = None) -> Applied:
    """Replicate ``model`` (already on this worker's device) over the data-parallel ranks: wrapped in
    DistributedDataParallel, whose ``no_sync`` defers the averaging on accumulation micro-steps. A model split
    by tensor or pipeline parallelism stays unwrapped, and its gradients are averaged over the ``dp_replicate``
    ranks after backward instead (DDP's buckets do not take the parts of parameters a split holds, DTensors)."""
    if mesh is not None and any(name in mesh.mesh_dim_names for name in ("tp", "pp")):
        if "dp_replicate" not in mesh.mesh_dim_names:
            return Applied(model)
        replicas = mesh["dp_replicate"]
        return Applied(model, reduce_gradients=partial(average_gradients, group=replicas.get_group(),
                                                       size=replicas.size()))
    # a dry run's model lives on the meta device, where DDP's constructor cannot verify shapes
    # (it reads them back as numbers); unwrapped, rank 0 still holds exactly its parameters
    if not world.is_distributed or any(p.is_meta for p in model.parameters()):
        return Applied(model)
    if not sync.averages_gradients:  # local SGD / DiLoCo: no gradient all-reduce at all
        _broadcast_from_first(model)
        return Applied(model)
    from torch.nn.parallel import DistributedDataParallel

    from distrain.compat.deferred_compiler import defer_disabled_methods

    defer_disabled_methods(DistributedDataParallel)  # its forward need not import torch's compiler
    device = torch.device(world.device)
    wrapped = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                      bucket_cap_mb=options.bucket_cap_mb,
                                      gradient_as_bucket_view=options.gradient_as_bucket_view,
                                      static_graph=options.static_graph,
                                      find_unused_parameters=options.find_unused_parameters)
    if compression is not None:
        compression.install(wrapped, sync.moved)
    return Applied(wrapped, no_sync=wrapped.no_sync)


def average_gradients(parameters: Iterable[torch.nn.Parameter], group: Any, size: int) -> None:
    """Average each gradient over the ranks of ``group`` (``size`` of them) in one all-reduce."""
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
        flat /= size
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()


def _broadcast_from_first(model: torch.nn.Module) -> None:
    """Start every worker from rank 0's parameters and buffers (what DDP's constructor does)."""
    import torch.distributed as dist

    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            dist.broadcast(tensor.data, src=0)
