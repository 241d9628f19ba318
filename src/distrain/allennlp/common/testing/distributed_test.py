"""``run_distributed_test``: run a function on several CPU processes joined in one gloo process group.

AllenNLP's distributed metric tests call ``run_distributed_test([-1, -1], func, *args)``; ``func`` receives
``(global_rank, world_size, device, *args, **kwargs)``. Processes are forked (the function may be a test's
local), the group's port is a free one (two suites can run side by side), and a worker's failure fails the call.
"""

from __future__ import annotations

import datetime
import socket
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _worker(rank: int, world_size: int, device_ids: list[int], port: int, func: Callable,
            args: tuple, kwargs: dict[str, Any]) -> None:
    device = device_ids[rank]
    if device >= 0:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if device >= 0 else "gloo", init_method=f"tcp://127.0.0.1:{port}",
                            world_size=world_size, rank=rank, timeout=datetime.timedelta(seconds=120))
    try:
        func(rank, world_size, device, *args, **kwargs)
    finally:
        dist.destroy_process_group()


def run_distributed_test(device_ids: list[int] | None = None, func: Callable | None = None, *args: Any,
                         **kwargs: Any) -> None:
    """Run ``func`` on one process per entry of ``device_ids`` (``-1``: CPU; default two CPU processes)."""
    device_ids = list(device_ids or [-1, -1])
    if any(device >= 0 for device in device_ids) and torch.cuda.device_count() <= max(device_ids):
        raise ValueError(f"run_distributed_test: devices {device_ids} asked for, "
                         f"{torch.cuda.device_count()} CUDA devices present")
    start_method = kwargs.pop("start_method", None) or ("spawn" if any(d >= 0 for d in device_ids) else "fork")
    mp.start_processes(_worker, args=(len(device_ids), device_ids, _free_port(), func, args, kwargs),
                       nprocs=len(device_ids), start_method=start_method)
