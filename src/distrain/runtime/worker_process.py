"""What every worker process does around its work: join the process group, set its threads and
device, route its logs to its own file, and leave cleanly."""

from __future__ import annotations

import datetime
import logging
import os
import socket
from pathlib import Path
from typing import Any, Callable

from distrain.distributed.config import DistributedConfig, make_world
from distrain.distributed.world import World
from distrain.runtime import watchdog
from distrain.runtime.watchdog import GRACE

logger = logging.getLogger(__name__)

WorkerFn = Callable[[World], Any]
#: an init method naming a rendezvous store the parent process already hosts
HOSTED_STORE = "hosted-store://"


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


def join_job(rank: int, size: int, local_rank: int, local_size: int, device_id: int,
             distributed: DistributedConfig | None, init_method: str, serialization_dir: Path | None = None,
             hang_reports: str | None = None) -> World:
    """This process's :class:`World` (its data-parallel place from the ``distributed`` block's degrees), joined
    to the job's process group (see :func:`init_worker`). A spawned worker (``hang_reports``: where its parent
    collects hang reports) is watched for hangs from here on; a torchrun/srun rank once its output folder is
    set up (:func:`~distrain.runtime.launch.set_up_output`)."""
    world = make_world(rank, size, local_rank, local_size, device_id, distributed)
    backend = (distributed.backend if distributed is not None else None) or ("nccl" if device_id >= 0 else "gloo")
    timeout = distributed.timeout if distributed is not None else 1800.0
    init_worker(world, backend, init_method, timeout, serialization_dir)
    if hang_reports is not None:
        log = serialization_dir / f"out_worker{rank}.log" if serialization_dir is not None else None
        watchdog.start(rank, timeout, log, hang_reports)
    return world


def init_worker(world: World, backend: str, init_method: str, timeout: float, serialization_dir: Path | None) -> None:
    """Set threads and device, join the process group, route this worker's logs to its own file.

    The log file is opened only after the rendezvous: by then the primary node has checked and
    prepared the serialization folder (``--force`` included), so no other node's file is in its way.
    """
    import torch
    import torch.distributed as dist

    torch.set_num_threads(cpu_threads_per_worker(world.local_size))
    if world.device.startswith("cuda"):
        torch.cuda.set_device(torch.device(world.device))
    if world.is_distributed and not dist.is_initialized():
        timeout += GRACE  # the hang watchdog (same timeout) writes every rank's stack before this fires
        kwargs: dict[str, Any] = {}
        if backend == "nccl":
            kwargs["device_id"] = torch.device(world.device)
        if init_method.startswith(HOSTED_STORE):  # the parent already listens: join as a client
            host, _, port = init_method[len(HOSTED_STORE):].rpartition(":")
            kwargs["store"] = dist.TCPStore(host, int(port), is_master=False,
                                            timeout=datetime.timedelta(seconds=timeout))
        elif init_method.startswith("tcp://") and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
            kwargs["store"] = _attempt_store(init_method, timeout)
        else:
            kwargs["init_method"] = init_method
        dist.init_process_group(
            backend, rank=world.rank, world_size=world.size, timeout=datetime.timedelta(seconds=timeout), **kwargs,
        )
    if serialization_dir is not None:
        configure_worker_logging(world, serialization_dir)


def _attempt_store(init_method: str, timeout: float):
    """torchrun's agent keeps one store across ``--max-restarts`` rounds: key this round's rendezvous apart.

    Without the prefix a restarted rank can read a dead rank's gloo address left by the previous
    round and fail with "connection refused" before the new rank publishes its own.
    """
    import torch.distributed as dist

    host, _, port = init_method[len("tcp://"):].rpartition(":")
    store = dist.TCPStore(host, int(port), is_master=False, timeout=datetime.timedelta(seconds=timeout))
    return dist.PrefixStore(f"distrain/round{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}", store)


class RunLogFile(logging.FileHandler):
    """A worker's log file. A line the disk refuses (full, over quota) is dropped without logging's own
    traceback on the console: the run reports the full disk itself, in one line."""

    def handleError(self, record: logging.LogRecord) -> None:
        import sys

        from distrain.job.disk import DISK_ERRNOS

        error = sys.exc_info()[1]
        if isinstance(error, OSError) and error.errno in DISK_ERRNOS:
            return
        super().handleError(record)


def configure_worker_logging(world: World, serialization_dir: Path) -> None:
    """Every worker logs to ``out_worker{rank}.log``; only the primary also logs to the console."""
    serialization_dir.mkdir(parents=True, exist_ok=True)
    handler = RunLogFile(serialization_dir / f"out_worker{world.rank}.log")
    handler.setFormatter(logging.Formatter(f"%(asctime)s rank{world.rank} %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    consoles = [h for h in root.handlers if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)]
    if not world.is_primary:
        for console in consoles:
            root.removeHandler(console)
    elif not consoles:  # a spawned worker starts with no handlers at all
        console = logging.StreamHandler()
        console.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(console)
    root.addHandler(handler)


def shutdown_worker() -> None:
    import torch.distributed as dist

    watchdog.stop()
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
