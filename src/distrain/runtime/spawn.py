"""One process per ``cuda_devices`` entry on this node: how they are started (fork server, spawn or
fork), how a failing worker ends the job with its own error, and how stop signals reach them."""

from __future__ import annotations

import contextlib
import datetime
import gc
import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from distrain.distributed.config import DistributedConfig
from distrain.errors import DistrainError, RunFailed, UsageError
from distrain.plugins import import_plugins
from distrain.runtime.watchdog import hang_message
from distrain.runtime.worker_process import HOSTED_STORE, free_port, join_job, shutdown_worker
from distrain.runtime.worker_server import use_worker_server
from distrain.job.stop import STOP_SIGNALS

logger = logging.getLogger(__name__)


class WorkerFailed(RunFailed):
    """A worker raised; the message holds its rank and original traceback (``rank``: that global rank)."""

    def __init__(self, message: str, rank: int | None = None) -> None:
        super().__init__(message)
        self.rank = rank


class HangDetected(RunFailed):
    """No progress for ``distributed.timeout`` seconds; the message names the ranks that did not arrive."""


def spawn(
    worker: Callable[..., Any],
    args: tuple,
    distributed: DistributedConfig,
    serialization_dir: Path | None,
    threads_before: int | None = None,
    include_packages: tuple[str, ...] = (),
) -> None:
    """One process per ``cuda_devices`` entry on this node, each calling ``worker(world, *args)``.

    ``threads_before``: this process's threads (:func:`live_threads`) after its imports; workers may be
    forked only if it started none since (see :func:`start_method`). Each worker imports ``include_packages``
    first.

    Returns when all workers finished. If one raises an error distrain reports itself (bad data, a
    non-finite loss, a stop signal), that very error is raised here; any other failure stops the
    others and raises :class:`WorkerFailed` naming its rank with the original traceback. If this
    process is interrupted (Ctrl-C) or sent SIGTERM, the workers are stopped before it exits.
    """
    may_fork = threads_before is not None and live_threads() == threads_before  # before the rendezvous' threads
    import torch.multiprocessing as mp

    store = None
    if distributed.master_port is None and distributed.num_nodes == 1:
        # Host the rendezvous here on a port the kernel picks: no window in which another process
        # can take a port we chose but have not bound yet.
        import torch.distributed as dist

        store = dist.TCPStore(distributed.master_addr, 0, is_master=True, wait_for_workers=False,
                              timeout=datetime.timedelta(seconds=distributed.timeout))
        init_method = f"{HOSTED_STORE}{distributed.master_addr}:{store.port}"
    else:
        init_method = f"tcp://{distributed.master_addr}:{distributed.master_port or free_port()}"
    method = start_method(distributed, may_fork)
    if method == "forkserver":
        use_worker_server()
    if method == "fork":
        # Forked workers share this heap copy-on-write. Frozen objects are skipped by the workers'
        # garbage collector, which would otherwise keep walking (and so copying) everything the parent
        # imported: measured at ~5% more CPU per training step than spawned workers.
        gc.freeze()
    logger.info("starting %d worker(s) (%s) on node %d/%d, rendezvous %s", len(distributed.cuda_devices),
                method, distributed.node_rank, distributed.num_nodes, init_method)
    reports = multiprocessing.get_context(method).SimpleQueue()
    hang_reports = tempfile.mkdtemp(prefix="distrain-watchdog-")
    context = mp.start_processes(
        _spawned_entry,
        args=(worker, args, distributed, init_method, serialization_dir, include_packages, reports, hang_reports),
        nprocs=len(distributed.cuda_devices),
        join=False,
        start_method=method,
    )
    try:
        with _sigterm_raises_system_exit():
            while not context.join():
                pass
    except (mp.ProcessRaisedException, mp.ProcessExitedException) as error:
        hang = hang_message(hang_reports, distributed.timeout)
        if hang is not None:
            raise HangDetected(hang) from None
        if not reports.empty():
            raise reports.get() from None  # the worker's own one-line error, same class and status
        rank = distributed.node_rank * len(distributed.cuda_devices) + error.error_index
        if isinstance(error, mp.ProcessRaisedException):
            first = first_failure(hang_reports)  # not a peer's lost connection, seen a moment later
            if first is not None:
                raise WorkerFailed(f"worker rank {first['rank']} failed:\n{first['traceback'].strip()}",
                                   int(first["rank"])) from None
            raise WorkerFailed(f"worker rank {rank} failed:\n{error.msg.strip()}", rank) from None
        raise WorkerFailed(f"worker rank {rank} {_exit_description(error.exit_code)}", rank) from None
    finally:
        stop_processes(context.processes)
        shutil.rmtree(hang_reports, ignore_errors=True)
        del store  # the rendezvous stops listening once every worker is gone


def _exit_description(code: int) -> str:
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"exited with code {code}"


def _spawned_entry(local_rank: int, worker, args, distributed: DistributedConfig, init_method: str,
                   serialization_dir, include_packages: tuple[str, ...], reports, hang_reports: str) -> None:
    per_node = len(distributed.cuda_devices)
    rank = distributed.node_rank * per_node + local_rank
    try:
        import_plugins(list(include_packages))  # registered components (strategies too) exist before anything is built
        world = join_job(rank, per_node * distributed.num_nodes, local_rank, per_node,
                         distributed.cuda_devices[local_rank], distributed, init_method, serialization_dir, hang_reports)
        worker(world, *args)
    except DistrainError as error:
        # reported in one line by the parent; the first worker to fail is the one reported
        reports.put(error)
        logger.error("worker rank %d stopped: %s", rank, error)
        _bounded_exit()
        raise SystemExit(error.exit_status) from None
    except Exception:
        # also in this worker's own log: on another node, the parent's console may be out of sight
        logger.exception("worker rank %d failed", rank)
        record_failure(hang_reports, rank)
        _bounded_exit()
        raise
    finally:
        shutdown_worker()


#: seconds a worker that stopped on an error may take to tear down and exit
EXIT_GRACE_S = 15.0


def _bounded_exit() -> None:
    """A worker that stopped on an error must be gone soon, whatever its teardown waits on (a peer still in a
    collective, a stuck writer): past the grace, every thread's stack goes to the log and the process ends, so
    the launcher sees it exit and stops the others. chaos.py met a DDP worker that stopped on a full disk and
    never exited (the others waited beside it)."""
    import faulthandler

    faulthandler.dump_traceback_later(EXIT_GRACE_S, exit=True)


def record_failure(folder: str, rank: int) -> None:
    """Note when and how this worker failed, before its exit closes its connections: its peers'
    collectives then fail too, and the parent must report this failure, not theirs."""
    import json
    import time
    import traceback

    record = {"rank": rank, "time": time.monotonic(), "traceback": traceback.format_exc()}
    with contextlib.suppress(OSError):
        (Path(folder) / f"failed_rank{rank}.json").write_text(json.dumps(record))


def first_failure(folder: str) -> dict[str, Any] | None:
    """The earliest failure a worker recorded with :func:`record_failure` (None if none did)."""
    import json

    failures = []
    for path in Path(folder).glob("failed_rank*.json"):
        with contextlib.suppress(OSError, ValueError):
            failures.append(json.loads(path.read_text()))
    return min(failures, key=lambda failure: failure["time"], default=None)


def start_method(distributed: DistributedConfig, may_fork: bool) -> str:
    """How to start the workers: from a fork server unless ``DISTRAIN_START_METHOD`` asks otherwise.

    ``forkserver`` (the default where available): a clean server process imports torch and the
    built-in components once (see :mod:`distrain.runtime.worker_server`, which starts it while
    the parent still validates the config and reads the data) and forks each worker from itself, so workers start
    with everything loaded. It never holds CUDA or the parent's heap, so it is safe with CUDA and
    workers run as fast as spawned ones. ``spawn`` starts a fresh interpreter per worker (seconds of
    imports each). ``fork`` copies the parent (opt-in, CPU only, and only when the parent started no
    thread since its imports: ``may_fork``), and trained 3-5% slower per step on its copy-on-write heap.
    """
    available = multiprocessing.get_all_start_methods()
    override = os.environ.get("DISTRAIN_START_METHOD")
    if not override:
        return "forkserver" if "forkserver" in available else "spawn"
    if override not in available:
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


@contextlib.contextmanager
def forwarding_stop_signals() -> Iterator[None]:
    """While workers run, pass SIGTERM/SIGINT sent to the parent on to them, so they checkpoint
    and stop together instead of the parent dying first (a scheduler often signals only the parent)."""
    def forward(number: int, frame) -> None:  # noqa: ARG001
        for child in multiprocessing.active_children():
            try:
                os.kill(child.pid, number)
            except ProcessLookupError:
                pass

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, forward) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
