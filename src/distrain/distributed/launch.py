"""Start the workers of a run: in this process, one spawned process per device, or as launched.

``torchrun`` and ``srun`` start the processes themselves; each one then joins the job as it was
told (see :mod:`distrain.distributed.environments`). Otherwise a ``distributed`` block spawns one
worker per ``cuda_devices`` entry on this node. A worker that raises ends the whole job.
"""

from __future__ import annotations

import datetime
import logging
import os
import socket
from pathlib import Path
from typing import Any, Callable

from distrain.distributed.config import DistributedConfig
from distrain.distributed.world import World

logger = logging.getLogger(__name__)

WorkerFn = Callable[[World], Any]


class WorkerFailed(Exception):
    """A worker raised; the message holds its rank and original traceback."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_threads_per_worker(local_workers: int) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, local_workers))


def init_worker(world: World, backend: str, init_method: str, timeout: float, serialization_dir: Path | None) -> None:
    """Set threads and device, join the process group, route this worker's logs to its own file."""
    import torch
    import torch.distributed as dist

    torch.set_num_threads(cpu_threads_per_worker(world.local_size))
    if world.device.startswith("cuda"):
        torch.cuda.set_device(torch.device(world.device))
    if serialization_dir is not None:
        configure_worker_logging(world, serialization_dir)
    if world.is_distributed and not dist.is_initialized():
        kwargs: dict[str, Any] = {}
        if backend == "nccl":
            kwargs["device_id"] = torch.device(world.device)
        dist.init_process_group(
            backend, init_method=init_method, rank=world.rank, world_size=world.size,
            timeout=datetime.timedelta(seconds=timeout), **kwargs,
        )


def configure_worker_logging(world: World, serialization_dir: Path) -> None:
    serialization_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(serialization_dir / f"out_worker{world.rank}.log")
    handler.setFormatter(logging.Formatter(f"%(asctime)s rank{world.rank} %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    if not world.is_primary:
        for other in list(root.handlers):
            if isinstance(other, logging.StreamHandler) and not isinstance(other, logging.FileHandler):
                root.removeHandler(other)


def shutdown_worker() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def spawn(
    worker: Callable[..., Any],
    args: tuple,
    distributed: DistributedConfig,
    serialization_dir: Path | None,
) -> None:
    """One process per ``cuda_devices`` entry on this node, each calling ``worker(world, *args)``."""
    import torch.multiprocessing as mp

    port = distributed.master_port or free_port()
    init_method = f"tcp://{distributed.master_addr}:{port}"
    logger.info("spawning %d worker(s) on node %d/%d, rendezvous %s", len(distributed.cuda_devices),
                distributed.node_rank, distributed.num_nodes, init_method)
    try:
        mp.start_processes(
            _spawned_entry,
            args=(worker, args, distributed, init_method, serialization_dir),
            nprocs=len(distributed.cuda_devices),
            join=True,
            start_method="spawn",
        )
    except mp.ProcessRaisedException as error:
        rank = distributed.node_rank * len(distributed.cuda_devices) + error.error_index
        raise WorkerFailed(f"worker rank {rank} failed:\n{error.msg.strip()}") from None
    except mp.ProcessExitedException as error:
        rank = distributed.node_rank * len(distributed.cuda_devices) + error.error_index
        raise WorkerFailed(f"worker rank {rank} exited with code {error.exit_code}") from None


def world_for(distributed: DistributedConfig, local_rank: int) -> World:
    per_node = len(distributed.cuda_devices)
    device = distributed.cuda_devices[local_rank]
    return World(
        rank=distributed.node_rank * per_node + local_rank,
        size=distributed.world_size,
        local_rank=local_rank,
        local_size=per_node,
        device=f"cuda:{device}" if device >= 0 else "cpu",
        weights=tuple(distributed.device_weights) if distributed.device_weights else None,
    )


def _spawned_entry(local_rank: int, worker, args, distributed: DistributedConfig, init_method: str, serialization_dir):
    world = world_for(distributed, local_rank)
    init_worker(world, distributed.default_backend(), init_method, distributed.timeout, serialization_dir)
    try:
        worker(world, *args)
    finally:
        shutdown_worker()
