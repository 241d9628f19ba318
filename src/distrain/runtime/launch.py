"""Where a command's work runs, how a run begins, and starting its workers again when one is lost.

A command joins its job first (:func:`joined`): in this process (no ``distributed`` block); as the
parent of one spawned process per ``cuda_devices`` entry on this node; or, when ``torchrun``/``srun``
started this process, as the rank it was told (see :mod:`distrain.runtime.environments`). The returned
:class:`Place` says which, and how the run begins (:func:`decide_start`, the one place that decides fresh,
``--recover``, restarted or continued). :func:`set_up_output` has the job's primary prepare the output
folder before anyone writes to it; :func:`run_workers` runs the work. A worker that raises ends the whole
job with its own error; stopping the parent stops its workers.
"""

from __future__ import annotations

import contextlib
import datetime
import enum
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from distrain.config.errors import ConfigError
from distrain.distributed.collectives import all_gather_object, broadcast_object
from distrain.distributed.config import DistributedConfig
from distrain.distributed.world import SINGLE, World
from distrain.errors import BadInput, RunFailed
from distrain.runtime import watchdog
from distrain.runtime.environments import detect
from distrain.runtime.spawn import forwarding_stop_signals, live_threads, spawn
from distrain.runtime.worker_process import configure_worker_logging, join_job, shutdown_worker
from distrain.job import history
from distrain.job.disk import OutputNotWritable, write_text_atomically
from distrain.job.stop import Preempted

logger = logging.getLogger(__name__)


class Start(enum.Enum):
    """How a run begins (see :func:`decide_start`)."""

    #: a new run (its folder refused if it holds one, unless ``--force``)
    FRESH = "fresh"
    #: ``--recover``: from the latest checkpoint, once the config is checked against the saved run
    RECOVER = "recover"
    #: this parent's workers again, after one was lost: from the latest checkpoint
    RESTARTED = "restarted"
    #: torchrun/srun started this rank again, or it joined a running job: from the latest checkpoint
    CONTINUED = "continued"

    @property
    def resumes(self) -> bool:
        """Whether the work resumes from the latest checkpoint (when one was written)."""
        return self is not Start.FRESH

    @property
    def sets_up_output(self) -> bool:
        """Whether the output folder is checked and prepared first (not when the job goes on in it)."""
        return self in (Start.FRESH, Start.RECOVER)


def decide_start(recover: bool, launched=None, serialization_dir: Path | None = None, restarted: bool = False) -> Start:
    """Fresh, ``--recover``, restarted (``restarted``: after a lost worker) or continued (``launched``: this
    process's launcher started it again, or it joins its job's running run; see :func:`continues_its_job`,
    which every rank must call together)."""
    if restarted:
        return Start.RESTARTED
    if launched is not None and continues_its_job(launched, serialization_dir):
        return Start.CONTINUED
    return Start.RECOVER if recover else Start.FRESH


@dataclass
class Place:
    """Where this process runs its part of the job."""

    distributed: DistributedConfig | None
    #: this process's world: ``SINGLE`` without a ``distributed`` block, the rank's under torchrun/srun, and
    #: None in the parent of spawned workers (each worker gets its own)
    world: World | None
    #: the job's primary process: it prepares the output folder and reports
    primary: bool
    serialization_dir: Path | None = None
    #: how the run begins; None for work that is never restarted (evaluate, predict)
    start: Start | None = None
    #: what torchrun/srun told this process, when they started it
    launched: Any = None
    #: this process's threads once its output was set up: workers may be forked only if it started none since
    threads_before: int | None = None

    @property
    def workers(self) -> int:
        return self.world.size if self.launched is not None else (
            self.distributed.world_size if self.distributed is not None else 1)


@contextlib.contextmanager
def joined(distributed: DistributedConfig | None, serialization_dir: Path | None = None,
           recover: bool | None = None) -> Iterator[Place]:
    """This process's place in the job, while it takes part: here, the parent of spawned workers, or (torchrun/
    srun) a rank in the process group, left at the end. ``recover``: how a restartable run was asked to begin
    (None: the work is never restarted)."""
    launched = detect()
    if launched is not None and launched.world_size == 1 and distributed is not None:
        launched = None  # e.g. a plain command in an sbatch script: the block says how many workers to spawn
    if launched is None:
        start = decide_start(recover) if recover is not None else None
        yield Place(distributed, SINGLE if distributed is None else None, distributed is None or distributed.node_rank == 0,
                    serialization_dir, start)
        return
    world = _join_launched(distributed, launched)
    try:
        start = decide_start(recover, launched, serialization_dir) if recover is not None else None
        if start is Start.CONTINUED and world.is_primary:  # torchrun started us again, or a node joined
            history.record(serialization_dir, "restart", launcher=launched.launcher, world_size=world.size,
                           restart_count=launched.restart_count)
        yield Place(distributed, world, world.is_primary, serialization_dir, start, launched)
    finally:
        shutdown_worker()


def set_up_output(place: Place, set_up: Callable[[int], None] | None = None) -> None:
    """The output folder, prepared by ``set_up(workers)`` on the job's primary process only (node 0's parent,
    or global rank 0 under torchrun/srun) before any worker writes to it, unless the run goes on in it; then
    this process logs to it (and, a torchrun/srun rank, is watched for hangs)."""
    if place.launched is None:
        if place.primary and set_up is not None and place.start.sets_up_output:
            set_up(place.workers)
        if place.world is SINGLE and place.serialization_dir is not None:
            configure_worker_logging(SINGLE, place.serialization_dir)
        place.threads_before = live_threads()  # before the data is read (see run_workers)
        return
    world = place.world
    problem: BadInput | None = None
    if world.is_primary and set_up is not None and place.start.sets_up_output:
        try:
            set_up(world.size)
            record_launched_job(place.launched, place.serialization_dir)
        except BadInput as error:
            problem = error
    problem = broadcast_object(problem)  # doubles as the barrier: nobody writes before the folder is ready
    if problem is not None:
        raise problem
    if place.serialization_dir is not None:
        configure_worker_logging(world, place.serialization_dir)
    if world.is_distributed:
        log = place.serialization_dir / f"out_worker{world.rank}.log" if place.serialization_dir is not None else None
        watchdog.start(world.rank, place.distributed.timeout if place.distributed else 1800.0, log)


def run_workers(place: Place, work: Callable[..., Any], args: tuple = (), include_packages: tuple[str, ...] = ()
                ) -> bool:
    """``work(world, *args)`` on this place's workers (with ``place.start``, ``start.resumes`` is passed
    last); return whether this process is the job's primary (the one that reports). Spawned workers import
    ``include_packages`` first; ``work`` and ``args`` must pickle. Lost workers are started again
    (``distributed.max_restarts``) when the run has a start."""
    resume = () if place.start is None else (place.start.resumes,)
    if place.world is not None:  # this process, or a torchrun/srun rank
        work(place.world, *args, *resume)
        return place.primary
    _spawn_with_restarts(work, args, place, include_packages)
    return place.primary


def run_job(work: Callable[..., Any], args: tuple, distributed: DistributedConfig | None) -> bool:
    """Work that writes no run folder and is never restarted (evaluate, predict): join, run, leave."""
    with joined(distributed) as place:
        set_up_output(place)
        return run_workers(place, work, args)


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


def _spawn_with_restarts(work: Callable[..., Any], args: tuple, place: Place, include_packages: tuple[str, ...]) -> None:
    """Spawn the workers; when one is lost (killed, crashed, hung) start them all again from the
    latest checkpoint, up to ``distributed.max_restarts`` times. Input errors are never retried.
    Stop signals sent to this process meanwhile are passed on to the workers.

    With ``min_workers``, a worker that fails again right after a restart (the same rank, twice in a row)
    is taken to be lost for good: the job starts again without it, on the remaining devices, while at
    least ``min_workers`` remain. ``data_loader.global_batch_size`` keeps each step's samples the same."""
    distributed, start, serialization_dir = place.distributed, place.start, place.serialization_dir
    restarts: list[dict[str, Any]] = []
    last_failed: int | None = None
    with forwarding_stop_signals():
        while True:
            resume = () if start is None else (start.resumes,)
            try:
                spawn(work, (*args, *resume), distributed, serialization_dir,
                      threads_before=None if restarts else place.threads_before, include_packages=include_packages)
                break
            except RunFailed as error:
                cause = restart_cause(error)
                if cause is None or start is None or len(restarts) >= distributed.max_restarts:
                    raise
                failed = getattr(error, "rank", None)
                record = {"cause": cause, "time": datetime.datetime.now().isoformat(timespec="seconds")}
                if _lost_for_good(distributed, failed, last_failed):
                    before = len(distributed.cuda_devices)
                    distributed = distributed.without_worker(failed)
                    record["world"] = f"{before} -> {before - 1}"
                    logger.warning("world %d -> %d: worker rank %d failed again right after a restart; going on "
                                   "without it", before, before - 1, failed)
                    failed = None
                last_failed = failed
                restarts.append(record)
                logger.warning("restart %d of %d: %s; starting every worker again from the latest checkpoint",
                               len(restarts), distributed.max_restarts, cause)
                history.record(serialization_dir, "restart", cause=cause, attempt=len(restarts),
                               of=distributed.max_restarts, **({"world": record["world"]} if "world" in record else {}))
                start = decide_start(recover=start.resumes, restarted=True)
        if restarts and serialization_dir is not None:
            record_restarts(Path(serialization_dir) / "metrics.json", restarts)


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


def _join_launched(distributed: DistributedConfig | None, launched) -> World:
    """torchrun / srun started this process: join the process group as the rank it was told."""
    if distributed is not None:
        problems = distributed.problems(world_size=launched.world_size)
        if problems:
            raise ConfigError(problems)
    if distributed is not None and len(distributed.cuda_devices) > launched.local_rank:
        device_id = distributed.cuda_devices[launched.local_rank]
    else:
        import torch

        device_id = launched.local_rank if torch.cuda.is_available() else -1
    return join_job(launched.rank, launched.world_size, launched.local_rank, launched.local_world_size, device_id,
                    distributed, f"tcp://{launched.master_addr}:{launched.master_port}")
