"""Start the workers of a run: one process per device, or join as launched.

``torchrun`` and ``srun`` start the processes themselves; each one then joins the job as it was
told (see :mod:`distrain.distributed.environments`). Otherwise a ``distributed`` block starts one
worker per ``cuda_devices`` entry on this node (forked or spawned, see :func:`start_method`).
A worker that raises ends the whole job; stopping the parent stops its workers.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import logging
import multiprocessing
import os
import signal
import socket
import threading
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
        kwargs: dict[str, Any] = {}
        if backend == "nccl":
            kwargs["device_id"] = torch.device(world.device)
        dist.init_process_group(
            backend, init_method=init_method, rank=world.rank, world_size=world.size,
            timeout=datetime.timedelta(seconds=timeout), **kwargs,
        )
    if serialization_dir is not None:
        configure_worker_logging(world, serialization_dir)


def configure_worker_logging(world: World, serialization_dir: Path) -> None:
    """Every worker logs to ``out_worker{rank}.log``; only the primary also logs to the console."""
    serialization_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(serialization_dir / f"out_worker{world.rank}.log")
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

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def spawn(
    worker: Callable[..., Any],
    args: tuple,
    distributed: DistributedConfig,
    serialization_dir: Path | None,
    may_fork: bool = False,
) -> None:
    """One process per ``cuda_devices`` entry on this node, each calling ``worker(world, *args)``.

    ``may_fork``: the caller knows this process started no threads since its imports (see
    :func:`start_method`).

    Returns when all workers finished. If one raises, the others are stopped and :class:`WorkerFailed`
    names its rank with the original traceback. If this process is interrupted (Ctrl-C) or sent
    SIGTERM, the workers are stopped before it exits, so nothing is left behind.
    """
    import torch.multiprocessing as mp

    port = distributed.master_port or free_port()
    init_method = f"tcp://{distributed.master_addr}:{port}"
    method = start_method(distributed, may_fork)
    if method == "fork":
        # Forked workers share this heap copy-on-write. Frozen objects are skipped by the workers'
        # garbage collector, which would otherwise keep walking (and so copying) everything the parent
        # imported: measured at ~5% more CPU per training step than spawned workers.
        gc.freeze()
    logger.info("starting %d worker(s) (%s) on node %d/%d, rendezvous %s", len(distributed.cuda_devices),
                method, distributed.node_rank, distributed.num_nodes, init_method)
    context = mp.start_processes(
        _spawned_entry,
        args=(worker, args, distributed, init_method, serialization_dir),
        nprocs=len(distributed.cuda_devices),
        join=False,
        start_method=method,
    )
    try:
        with _sigterm_raises_system_exit():
            while not context.join():
                pass
    except mp.ProcessRaisedException as error:
        rank = distributed.node_rank * len(distributed.cuda_devices) + error.error_index
        raise WorkerFailed(f"worker rank {rank} failed:\n{error.msg.strip()}") from None
    except mp.ProcessExitedException as error:
        rank = distributed.node_rank * len(distributed.cuda_devices) + error.error_index
        raise WorkerFailed(f"worker rank {rank} exited with code {error.exit_code}") from None
    finally:
        stop_processes(context.processes)


def start_method(distributed: DistributedConfig, may_fork: bool) -> str:
    """How to start the workers: ``spawn`` unless ``DISTRAIN_START_METHOD`` asks for another.

    ``spawn`` starts a fresh interpreter that imports torch and unpickles the prepared data again
    (seconds per worker), and is the only safe way once CUDA may be initialised. ``fork`` starts
    workers much sooner (they inherit modules, plugins and data), but forked workers trained ~3-5%
    slower per step in ``scripts/bench_scaling.py`` (they run on the parent's copy-on-write heap), so
    it is opt-in for short runs. It is honoured only for CPU-only runs whose parent started no thread
    since its imports (``may_fork``): a fork copies every running thread's locks.
    """
    available = multiprocessing.get_all_start_methods()
    override = os.environ.get("DISTRAIN_START_METHOD")
    if not override:
        return "spawn"
    if override not in available:
        from distrain.errors import UsageError

        raise UsageError(f"DISTRAIN_START_METHOD={override}: expected one of {', '.join(available)}")
    if override == "fork" and (distributed.uses_cuda or not may_fork):
        logger.warning("DISTRAIN_START_METHOD=fork is unsafe here (CUDA, or threads already started); spawning")
        return "spawn"
    return override


def live_threads() -> int | None:
    """Threads of this process at OS level, so torch's and BLAS's pools count too (None: unknown)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def stop_processes(processes: list, grace: float = 5.0) -> None:
    """SIGTERM every live process, then SIGKILL whatever is still alive after ``grace`` seconds."""
    import time

    alive = [process for process in processes if process.is_alive()]
    for process in alive:
        process.terminate()
    deadline = time.monotonic() + grace
    for process in alive:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in alive:
        if process.is_alive():
            process.kill()
            process.join()


@contextlib.contextmanager
def _sigterm_raises_system_exit():
    """SIGTERM would end this process without running ``finally`` blocks (leaving the workers
    running); turn it into ``SystemExit(143)`` while the workers run so they are stopped first.
    A handler the caller installed (e.g. one that forwards the signal so workers checkpoint) is kept."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
    except Exception:
        # also in this worker's own log: on another node, the parent's console may be out of sight
        logger.exception("worker rank %d failed", world.rank)
        raise
    finally:
        shutdown_worker()
