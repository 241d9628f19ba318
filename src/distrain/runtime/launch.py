"""Run a command's work on the job's workers, and start them again from the latest checkpoint when one is lost.

:func:`run_job` runs a command's work in one of three ways: in this process (no ``distributed``
block); one spawned process per ``cuda_devices`` entry on this node (the parent reads the data once
first); or, when ``torchrun``/``srun`` started this process, joining the job as it was told (see
:mod:`distrain.runtime.environments`). A worker that raises ends the whole job with its own
error; stopping the parent stops its workers.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from distrain.config.errors import ConfigError
from distrain.distributed.collectives import all_gather_object, broadcast_object
from distrain.distributed.config import DistributedConfig, make_world
from distrain.distributed.world import SINGLE, World
from distrain.errors import BadInput, RunFailed
from distrain.runtime import watchdog
from distrain.runtime.environments import detect
from distrain.runtime.spawn import forwarding_stop_signals, live_threads, spawn
from distrain.runtime.worker_process import configure_worker_logging, init_worker, shutdown_worker
from distrain.training import history
from distrain.training.disk import OutputNotWritable, write_text_atomically
from distrain.training.preemption import Preempted

logger = logging.getLogger(__name__)


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


#: in a run folder started by a launcher's job: that job's id, so its later rounds know they continue it
LAUNCHED_JOB_FILE = "launched_job.json"


def continues_its_job(launched, serialization_dir: Path | None) -> bool:
    """Whether this launched process continues its job's run rather than starting it, the same answer on
    every rank: yes when the launcher started any rank again (torchrun's restart count), or when the run
    folder was started by this very job. The second covers a node that joins a running job: its new agent
    counts no restarts, and the workers torchrun restarts on the other nodes for it may count none either
    (membership changes are not restarts). A job without an id of its own (``--rdzv-id`` left at "none")
    has only the first."""
    recorded = None
    if launched.job_id is not None and serialization_dir is not None:
        import json

        try:
            recorded = json.loads((Path(serialization_dir) / LAUNCHED_JOB_FILE).read_text()).get("job_id")
        except (OSError, ValueError):
            recorded = None
    mine = launched.restart_count > 0 or (recorded is not None and recorded == launched.job_id)
    return any(all_gather_object(mine))


def record_launched_job(launched, serialization_dir: Path | None) -> None:
    """Note the launcher's job id in the run folder it just started (see :func:`continues_its_job`)."""
    if launched.job_id is None or serialization_dir is None:
        return
    import json

    record = {"launcher": launched.launcher, "job_id": launched.job_id}
    write_text_atomically(Path(serialization_dir) / LAUNCHED_JOB_FILE, json.dumps(record))


def _spawn_with_restarts(job: Job, prepared: Any, distributed: DistributedConfig, may_fork: bool) -> None:
    """Spawn the workers; when one is lost (killed, crashed, hung) start them all again from the
    latest checkpoint, up to ``distributed.max_restarts`` times. Input errors are never retried.

    With ``min_workers``, a worker that fails again right after a restart (the same rank, twice in a row)
    is taken to be lost for good: the job starts again without it, on the remaining devices, while at
    least ``min_workers`` remain. ``data_loader.global_batch_size`` keeps each step's samples the same."""
    restarts: list[dict[str, Any]] = []
    last_failed: int | None = None
    while True:
        try:
            spawn(_run_work, (job, prepared), distributed, job.serialization_dir, may_fork=may_fork and not restarts,
                  include_packages=job.include_packages)
            break
        except RunFailed as error:
            cause = restart_cause(error)
            if cause is None or job.restart is None or len(restarts) >= distributed.max_restarts:
                raise
            failed = getattr(error, "rank", None)
            record = {"cause": cause, "time": datetime.datetime.now().isoformat(timespec="seconds")}
            if _lost_for_good(distributed, failed, last_failed):
                before = len(distributed.cuda_devices)
                distributed = distributed.without_worker(failed)
                job = dataclasses.replace(job, distributed=distributed)
                record["world"] = f"{before} -> {before - 1}"
                logger.warning("world %d -> %d: worker rank %d failed again right after a restart; going on "
                               "without it", before, before - 1, failed)
                failed = None
            last_failed = failed
            restarts.append(record)
            logger.warning("restart %d of %d: %s; starting every worker again from the latest checkpoint",
                           len(restarts), distributed.max_restarts, cause)
            history.record(job.serialization_dir, "restart", cause=cause, attempt=len(restarts),
                           of=distributed.max_restarts, **({"world": record["world"]} if "world" in record else {}))
            job = job.restart(job)
    if restarts and job.serialization_dir is not None:
        record_restarts(Path(job.serialization_dir) / "metrics.json", restarts)


def _lost_for_good(distributed: DistributedConfig, failed: int | None, last_failed: int | None) -> bool:
    """Whether worker ``failed`` is to be left out: it failed in the previous attempt too, and enough
    workers remain without it."""
    if distributed.min_workers is None or failed is None or failed != last_failed:
        return False
    return len(distributed.cuda_devices) - 1 >= distributed.min_workers


def restart_cause(error: BaseException) -> str | None:
    """The first line of a lost worker's error, or None when restarting cannot help: the user's
    input, a stop the user asked for, or an output the disk refused."""
    if not isinstance(error, RunFailed) or isinstance(error, (Preempted, OutputNotWritable)):
        return None
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def record_restarts(metrics_file: Path, restarts: list[dict[str, Any]]) -> None:
    import json

    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    metrics["restarts"] = metrics.get("restarts", []) + restarts
    write_text_atomically(metrics_file, json.dumps(metrics, indent=2))


def _run_work(world: World, job: Job, prepared: Any) -> None:
    job.work(world, prepared, *job.args)


def _run_launched(job: Job, launched) -> bool:
    """torchrun / srun started this process: join the job; the primary alone prepares the output."""
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
    restarted = job.restart is not None and continues_its_job(launched, job.serialization_dir)
    if restarted:  # torchrun started us again, or a node joined: continue from the latest checkpoint
        job = job.restart(job)
        if world.is_primary:
            history.record(job.serialization_dir, "restart", launcher=launched.launcher, world_size=world.size,
                           restart_count=launched.restart_count)
    try:
        problem: BadInput | None = None
        if world.is_primary and job.setup_output is not None and not restarted:
            try:
                job.setup_output(world.size)
                record_launched_job(launched, job.serialization_dir)
            except BadInput as error:
                problem = error
        problem = broadcast_object(problem)  # doubles as the barrier: nobody writes before the folder is ready
        if problem is not None:
            raise problem
        if job.serialization_dir is not None:
            configure_worker_logging(world, job.serialization_dir)
        if world.is_distributed:
            log = job.serialization_dir / f"out_worker{world.rank}.log" if job.serialization_dir is not None else None
            watchdog.start(world.rank, timeout, log)
        job.work(world, job.prepare(world) if job.prepare else None, *job.args)
    finally:
        shutdown_worker()
    return world.is_primary


