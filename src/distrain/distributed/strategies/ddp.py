"""Replicate the model on every worker and average gradients (PyTorch DistributedDataParallel)."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Iterable

import torch
from annotated_types import Gt

from distrain.distributed.compression import GradientCompression
from distrain.distributed.strategy import ParallelStrategy
from distrain.distributed.sync import SyncMode
from distrain.distributed.world import SINGLE, World

#: DistributedDataParallel's settings and distrain's defaults for them (options of plugin strategies
#: that do not shard take these too)
DDP_DEFAULTS = {"bucket_cap_mb": 25.0, "gradient_as_bucket_view": True, "static_graph": False,
                "find_unused_parameters": False}


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

    def model_init_context(self, dims=None) -> contextlib.AbstractContextManager:
        """Sets glibc's heap for a CPU worker: every step frees and allocates the same activations."""
        if self.world.device == "cpu":
            from distrain.compat.host_memory import keep_step_memory

            keep_step_memory()  # see host_memory
        return super().model_init_context(dims)


def apply_ddp(model: torch.nn.Module, mesh: Any, options: ParallelStrategy, world: World, sync: SyncMode,
              compression: GradientCompression | None = None) -> tuple[torch.nn.Module, Any]:
    """Replicate ``model`` (already on this worker's device) over the data-parallel ranks. Returns the module
    to call forward on and, for a model split by tensor or pipeline parallelism, the process group whose
    ranks average each gradient after backward (DDP's buckets do not take the parts of parameters a split
    holds, DTensors); None when DDP (or nothing, on one process) averages them."""
    if mesh is not None and any(name in mesh.mesh_dim_names for name in ("tp", "pp")):
        replicas = "dp_replicate" in mesh.mesh_dim_names
        return model, mesh["dp_replicate"].get_group() if replicas else None
    # a dry run's model lives on the meta device, where DDP's constructor cannot verify shapes
    # (it reads them back as numbers); unwrapped, rank 0 still holds exactly its parameters
    if not world.is_distributed or any(p.is_meta for p in model.parameters()):
        return model, None
    if not sync.averages_gradients:  # local SGD / DiLoCo: no gradient all-reduce at all
        _broadcast_from_first(model)
        return model, None
    from torch.nn.parallel import DistributedDataParallel

    from distrain.compat.deferred_compiler import defer_disabled_methods

    defer_disabled_methods(DistributedDataParallel)  # its forward need not import torch's compiler
    device = torch.device(world.device)
    settings = {key: getattr(options, key, default) for key, default in DDP_DEFAULTS.items()}
    wrapped = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None, **settings)
    if compression is not None:
        compression.install(wrapped, sync.moved)
    return wrapped, None


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
