"""The few collective operations the framework needs, safe to call in a single process."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def _device() -> torch.device:
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_sum(tensor: torch.Tensor) -> torch.Tensor:
    """The element-wise sum over all ranks (the input itself when not distributed)."""
    return _all_reduced(tensor, dist.ReduceOp.SUM)


def _all_reduced(tensor: torch.Tensor, op: Any) -> torch.Tensor:
    """``tensor`` reduced by ``op`` over all ranks, on the backend's device and back on its own."""
    if not is_distributed():
        return tensor
    moved = tensor.to(_device())
    dist.all_reduce(moved, op=op)
    return moved.to(tensor.device)


def all_reduce_sum_async(tensor: torch.Tensor) -> tuple[torch.Tensor, Any]:
    """Start an element-wise sum over all ranks; returns (the tensor the sum lands in, a handle to
    ``wait()`` on). The caller reads the tensor only after ``wait()``."""
    moved = tensor.to(_device())
    work = dist.all_reduce(moved, op=dist.ReduceOp.SUM, async_op=True)
    return moved, work


def all_reduce_max(tensor: torch.Tensor) -> torch.Tensor:
    """The element-wise maximum over all ranks (the input itself when not distributed)."""
    return _all_reduced(tensor, dist.ReduceOp.MAX)


def all_gather_tensors(tensor: torch.Tensor) -> list[torch.Tensor]:
    """Every rank's 1-D tensor, whatever its length (empty included), in rank order."""
    if not is_distributed():
        return [tensor]
    device = _device()
    length = torch.tensor([tensor.shape[0]], device=device)
    lengths = [torch.zeros_like(length) for _ in range(dist.get_world_size())]
    dist.all_gather(lengths, length)
    longest = int(max(l.item() for l in lengths))
    padded = torch.zeros((longest, *tensor.shape[1:]), dtype=tensor.dtype, device=device)
    padded[: tensor.shape[0]] = tensor.to(device)
    gathered = [torch.zeros_like(padded) for _ in lengths]
    dist.all_gather(gathered, padded)
    return [g[: int(l.item())].to(tensor.device) for g, l in zip(gathered, lengths)]


def all_gather_object(value: Any) -> list[Any]:
    if not is_distributed():
        return [value]
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, value)
    return gathered


def broadcast_object(value: Any, src: int = 0) -> Any:
    if not is_distributed():
        return value
    holder = [value]
    dist.broadcast_object_list(holder, src=src)
    return holder[0]


def barrier() -> None:
    if is_distributed():
        dist.barrier()


#: whether this rank's losses, loss weights and metric statistics count (model parallelism: ranks
#: sharing a data-parallel coordinate compute the same ones; only one of them reports)
_REPORTS = [True]


def set_reporting(reports: bool) -> None:
    """Set once per worker by ``parallelize`` (a split model reports from one rank per data-parallel
    coordinate, see :func:`counted`)."""
    _REPORTS[0] = reports


def reports() -> bool:
    return _REPORTS[0]


def counted(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` where this rank reports, zeros where another rank reports the same samples
    (a sum over all ranks then counts each sample once)."""
    return tensor if _REPORTS[0] else torch.zeros_like(tensor)
