"""Start the workers of a job and build each one's :class:`World` (the only place one is built).

:func:`run_job` runs a command's work in one of three ways: in this process (no ``distributed``
block); one spawned process per ``cuda_devices`` entry on this node (the parent reads the data once
first); or, when ``torchrun``/``srun`` started this process, joining the job as it was told (see
:mod:`distrain.distributed.environments`). A worker that raises ends the whole job with its own
error; stopping the parent stops its workers.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import threading
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from distrain.distributed.config import DistributedConfig
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.world import SINGLE, World
from distrain.distributed.worker_server import use_worker_server
from distrain.errors import BadInput, DistrainError, RunFailed, UsageError

logger = logging.getLogger(__name__)

WorkerFn = Callable[[World], Any]
#: an init method naming a rendezvous store the parent process already hosts
HOSTED_STORE = "hosted-store://"


class WorkerFailed(RunFailed):
    """A worker raised; the message holds its rank and original traceback."""


class HangDetected(RunFailed):
    """No progress for ``distributed.timeout`` seconds; the message names the ranks that did not arrive."""


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
        from distrain.distributed.watchdog import GRACE

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

    from distrain.distributed import watchdog

    watchdog.stop()
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def make_world(
    rank: int, size: int, local_rank: int, local_size: int, device_id: int, distributed: DistributedConfig | None
) -> World:
    """This process's place in the job; its data-parallel coordinate comes from the parallel degrees."""
    dims = distributed.dims(size) if distributed is not None else ParallelDims.data_parallel(size)
    weights = distributed.fixed_weights() if distributed is not None else None
    return World(
        rank=rank, size=size, local_rank=local_rank, local_size=local_size,
        device=f"cuda:{device_id}" if device_id >= 0 else "cpu", weights=weights,
        dp_rank=dims.dp_rank(rank), dp_size=dims.dp_size,
    )


@contextlib.contextmanager
def dry_run_world(distributed: DistributedConfig | None, world_size: int | None = None) -> Iterator[World]:
    """Rank 0 of the configured job with no other process running: a fake process group (torch's
    ``fake`` backend, whose collectives do nothing) stands in for the job's, so the strategy, loaders
    and trainer are built exactly as a real rank 0 builds them, on the CPU, without training."""
    size = world_size or (distributed.world_size if distributed is not None else 1)
    local_size = min(size, len(distributed.cuda_devices)) if distributed is not None else 1
    world = make_world(0, size, 0, local_size, -1, distributed)
    if size == 1:
        yield world
        return
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=size)
    try:
        yield world
    finally:
        dist.destroy_process_group()


# --------------------------------------------------------------------------------------- jobs
@dataclass
class Job:
    """A command's work on every worker, and what happens once before the workers start.

    ``work(world, prepared, *args)`` runs on every worker; ``prepare(world or None)`` reads the data
    (in the parent of spawned workers with ``None``, else on each worker with its world) and
    ``setup_output(process_count)`` prepares the output folder on the job's primary process only,
    before any worker writes to it. All three must be importable by name (spawned workers unpickle them).
    """

    work: Callable[..., Any]
    args: tuple = ()
    distributed: DistributedConfig | None = None
    serialization_dir: Path | None = None
    include_packages: tuple[str, ...] = ()
    prepare: Callable[[World | None], Any] | None = None
    setup_output: Callable[[int], None] | None = None
    #: the job to run again after a lost worker (from the latest checkpoint); None: never restarted
    restart: Callable[["Job"], "Job"] | None = None


def run_job(job: Job) -> bool:
    """Run ``job`` here, on spawned workers, or as a process torchrun/srun launched; return whether
    this process is the job's primary (the one that reports)."""
    from distrain.distributed.environments import detect

    launched = detect()
    if launched is not None and launched.world_size == 1 and job.distributed is not None:
        launched = None  # e.g. a plain command in an sbatch script: the block says how many workers to spawn
    if launched is not None:
        return _run_launched(job, launched)
    distributed = job.distributed
    primary = distributed is None or distributed.node_rank == 0
    if primary and job.setup_output is not None:
        job.setup_output(distributed.world_size if distributed is not None else 1)
    if distributed is None:
        if job.serialization_dir is not None:
            configure_worker_logging(SINGLE, job.serialization_dir)
        job.work(SINGLE, job.prepare(SINGLE) if job.prepare else None, *job.args)
        return True
    threads_before = live_threads()
    prepared = job.prepare(None) if job.prepare else None
    may_fork = threads_before is not None and live_threads() == threads_before
    with forwarding_stop_signals():
        _spawn_with_restarts(job, prepared, distributed, may_fork)
    return primary


def _spawn_with_restarts(job: Job, prepared: Any, distributed: DistributedConfig, may_fork: bool) -> None:
    """Spawn the workers; when one is lost (killed, crashed, hung) start them all again from the
    latest checkpoint, up to ``distributed.max_restarts`` times. Input errors are never retried."""
    restarts: list[dict[str, Any]] = []
    while True:
        try:
            spawn(_run_work, (job, prepared), distributed, job.serialization_dir, may_fork=may_fork and not restarts,
                  include_packages=job.include_packages)
            break
        except RunFailed as error:
            cause = restart_cause(error)
            if cause is None or job.restart is None or len(restarts) >= distributed.max_restarts:
                raise
            restarts.append({"cause": cause, "time": datetime.datetime.now().isoformat(timespec="seconds")})
            logger.warning("restart %d of %d: %s; starting every worker again from the latest checkpoint",
                           len(restarts), distributed.max_restarts, cause)
            job = job.restart(job)
    if restarts and job.serialization_dir is not None:
        record_restarts(Path(job.serialization_dir) / "metrics.json", restarts)


def restart_cause(error: BaseException) -> str | None:
    """The first line of a lost worker's error, or None when restarting cannot help: the user's
    input, a stop the user asked for, or an output the disk refused."""
    from distrain.training.disk import OutputNotWritable
    from distrain.training.preemption import Preempted

    if not isinstance(error, RunFailed) or isinstance(error, (Preempted, OutputNotWritable)):
        return None
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def record_restarts(metrics_file: Path, restarts: list[dict[str, Any]]) -> None:
    import json

    from distrain.training.disk import write_text_atomically

    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    metrics["restarts"] = metrics.get("restarts", []) + restarts
    write_text_atomically(metrics_file, json.dumps(metrics, indent=2))


def _run_work(world: World, job: Job, prepared: Any) -> None:
    job.work(world, prepared, *job.args)


def _run_launched(job: Job, launched) -> bool:
    """torchrun / srun started this process: join the job; the primary alone prepares the output."""
    from distrain.config.errors import ConfigError
    from distrain.distributed.collectives import broadcast_object

    distributed = job.distributed
    if distributed is not None:
        problems = distributed.problems(world_size=launched.world_size)
        if problems:
            raise ConfigError(problems)
    if distributed is not None and len(distributed.cuda_devices) > launched.local_rank:
        device_id = distributed.cuda_devices[launched.local_rank]
    else:
        import torch

        device_id = launched.local_rank if torch.cuda.is_available() else -1
    world = make_world(launched.rank, launched.world_size, launched.local_rank, launched.local_world_size,
                       device_id, distributed)
    backend = (distributed.backend if distributed and distributed.backend else None) or (
        "nccl" if device_id >= 0 else "gloo"
    )
    timeout = distributed.timeout if distributed else 1800.0
    init_worker(world, backend, f"tcp://{launched.master_addr}:{launched.master_port}", timeout, serialization_dir=None)
    restarted = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") or 0) > 0 and job.restart is not None
    if restarted:  # torchrun --max-restarts started us again: continue from the latest checkpoint
        job = job.restart(job)
    try:
        problem: BadInput | None = None
        if world.is_primary and job.setup_output is not None and not restarted:
            try:
                job.setup_output(world.size)
            except BadInput as error:
                problem = error
        problem = broadcast_object(problem)  # doubles as the barrier: nobody writes before the folder is ready
        if problem is not None:
            raise problem
        if job.serialization_dir is not None:
            configure_worker_logging(world, job.serialization_dir)
        if world.is_distributed:
            from distrain.distributed import watchdog

            log = job.serialization_dir / f"out_worker{world.rank}.log" if job.serialization_dir is not None else None
            watchdog.start(world.rank, timeout, log)
        job.work(world, job.prepare(world) if job.prepare else None, *job.args)
    finally:
        shutdown_worker()
    return world.is_primary


def spawn(
    worker: Callable[..., Any],
    args: tuple,
    distributed: DistributedConfig,
    serialization_dir: Path | None,
    may_fork: bool = False,
    include_packages: tuple[str, ...] = (),
) -> None:
    """One process per ``cuda_devices`` entry on this node, each calling ``worker(world, *args)``.

    ``may_fork``: the caller knows this process started no threads since its imports (see
    :func:`start_method`). Each worker imports ``include_packages`` first.

    Returns when all workers finished. If one raises an error distrain reports itself (bad data, a
    non-finite loss, a stop signal), that very error is raised here; any other failure stops the
    others and raises :class:`WorkerFailed` naming its rank with the original traceback. If this
    process is interrupted (Ctrl-C) or sent SIGTERM, the workers are stopped before it exits.
    """
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
        from distrain.distributed.watchdog import hang_message

        hang = hang_message(hang_reports, distributed.timeout)
        if hang is not None:
            raise HangDetected(hang) from None
        if not reports.empty():
            raise reports.get() from None  # the worker's own one-line error, same class and status
        rank = distributed.node_rank * len(distributed.cuda_devices) + error.error_index
        if isinstance(error, mp.ProcessRaisedException):
            first = first_failure(hang_reports)  # not a peer's lost connection, seen a moment later
            if first is not None:
                raise WorkerFailed(f"worker rank {first['rank']} failed:\n{first['traceback'].strip()}") from None
            raise WorkerFailed(f"worker rank {rank} failed:\n{error.msg.strip()}") from None
        raise WorkerFailed(f"worker rank {rank} {_exit_description(error.exit_code)}") from None
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
    from distrain.plugins import import_plugins

    per_node = len(distributed.cuda_devices)
    rank = distributed.node_rank * per_node + local_rank
    try:
        import_plugins(list(include_packages))  # registered components (strategies too) exist before anything is built
        world = make_world(rank, distributed.world_size, local_rank, per_node, distributed.cuda_devices[local_rank],
                           distributed)
        init_worker(world, distributed.default_backend(), init_method, distributed.timeout, serialization_dir)
        from distrain.distributed import watchdog

        log = serialization_dir / f"out_worker{rank}.log" if serialization_dir is not None else None
        watchdog.start(rank, distributed.timeout, log, hang_reports)
        worker(world, *args)
    except DistrainError as error:
        # reported in one line by the parent; the first worker to fail is the one reported
        reports.put(error)
        logger.error("worker rank %d stopped: %s", rank, error)
        raise SystemExit(error.exit_status) from None
    except Exception:
        # also in this worker's own log: on another node, the parent's console may be out of sight
        logger.exception("worker rank %d failed", rank)
        record_failure(hang_reports, rank)
        raise
    finally:
        shutdown_worker()


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
    built-in components once (see :mod:`distrain.distributed.worker_server`, which starts it while
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
    from distrain.training.preemption import STOP_SIGNALS

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
