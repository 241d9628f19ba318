"""``distrain train CONFIG -s DIR [--recover]``: validate, prepare data once, launch the workers.

A run stopped by a signal exits with status 1 and a message giving the exact ``--recover`` command.
Errors a spawned worker classified (bad checkpoint, non-finite loss, pre-emption) reach the user
as that worker's one-line message, not as a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import shlex
import shutil
from pathlib import Path
from typing import Any, Iterator

from distrain.errors import ReportedError, UsageError

logger = logging.getLogger("distrain")


def parse_ext_vars(pairs: list[str]) -> dict[str, str]:
    ext_vars = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--ext-var {pair!r}: expected KEY=VALUE")
        ext_vars[key] = value
    return ext_vars


def load_and_resolve(args: argparse.Namespace):
    """The evaluated config and its validated plan; plugins are imported first."""
    from distrain.config.loading import load_config
    from distrain.experiment import resolve_experiment
    from distrain.plugins import import_plugins

    config = load_config(args.config, args.overrides, parse_ext_vars(args.ext_var))
    import_plugins(args.include_package)
    return config, resolve_experiment(config)


def run(args: argparse.Namespace) -> int:
    from distrain.distributed.environments.environment import detect

    from distrain.training.preemption import Preempted

    configure_logging()
    config, resolved = load_and_resolve(args)
    serialization_dir = Path(args.serialization_dir)
    recover = getattr(args, "recover", False)
    launched = detect()
    if launched is not None and launched.world_size == 1 and resolved.distributed is not None:
        launched = None  # e.g. a plain command in an sbatch script: the block says how many workers to spawn
    try:
        if launched is not None:
            primary = run_as_launched(launched, config, resolved, serialization_dir, args)
        else:
            distributed = resolved.distributed
            primary = distributed is None or distributed.node_rank == 0
            if primary:
                workers = distributed.world_size if distributed is not None else 1
                prepare_serialization_dir(serialization_dir, args.force, config, recover, workers)
            if distributed is not None:
                run_spawned(config, resolved, serialization_dir, args.include_package, recover)
            else:
                run_single(config, serialization_dir, recover)
    except Preempted as stopped:
        raise Preempted(f"{stopped}; resume with: {resume_command(args)}") from None
    if primary:
        print(f"training finished; outputs in {serialization_dir}")
    return 0


def resume_command(args: argparse.Namespace) -> str:
    """The command line that continues this run from its latest checkpoint."""
    words = ["distrain", "train", args.config, "-s", args.serialization_dir]
    if args.overrides:
        words += ["-o", args.overrides]
    for pair in args.ext_var:
        words += ["--ext-var", pair]
    for package in args.include_package:
        words += ["--include-package", package]
    return shlex.join(words + ["--recover"])


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def prepare_serialization_dir(
    directory: Path, force: bool, config: dict[str, Any], recover: bool = False, workers: int = 1
) -> None:
    """Refuse to overwrite a previous run unless ``--force``; with ``--recover`` check that the
    config still fits the saved run. Then save the resolved config.

    Only the primary process of a job calls this (node 0's parent, or global rank 0 when launched by
    torchrun/srun); other nodes never check, clear or write the folder: their workers only add their
    own ``out_worker{rank}.log`` after the rendezvous, when this has already happened.
    """
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--serialization-dir {directory} exists and is not a directory")
    if recover:
        from distrain.training.resume_check import check_recoverable

        latest = check_recoverable(directory, config, workers)
        logger.info("recovering from %s", latest)
    elif directory.is_dir() and any(directory.iterdir()):
        if not force:
            raise UsageError(
                f"--serialization-dir {directory} is not empty; pass --recover to resume it or --force to start over"
            )
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config, indent=2))


def run_single(config: dict[str, Any], serialization_dir: Path, recover: bool = False) -> None:
    from distrain.distributed.launch import configure_worker_logging
    from distrain.distributed.world import SINGLE
    from distrain.experiment import train_worker

    configure_worker_logging(SINGLE, serialization_dir)
    train_worker(SINGLE, config, serialization_dir, recover=recover)


def run_spawned(
    config: dict[str, Any], resolved, serialization_dir: Path, include_packages: list[str], recover: bool = False
) -> None:
    import multiprocessing

    from distrain.distributed.launch import WorkerFailed, live_threads, spawn
    from distrain.experiment import prepare_data
    from distrain.training.preemption import Preempted

    threads_before = live_threads()
    prepared = prepare_data(resolved.build())
    reports = multiprocessing.get_context("spawn").SimpleQueue()
    arguments = (config, serialization_dir, prepared, include_packages, recover, reports)
    may_fork = threads_before is not None and live_threads() == threads_before
    try:
        with forwarding_stop_signals():
            spawn(spawned_worker, arguments, resolved.distributed, serialization_dir, may_fork=may_fork)
    except WorkerFailed:
        if reports.empty():
            raise
        status, message, preempted = reports.get()
        if preempted:
            raise Preempted(message) from None
        raise ReportedError(status, message) from None


def spawned_worker(world, config, serialization_dir, prepared, include_packages, recover=False, reports=None) -> None:
    """One spawned worker; an error it can name in one line goes to the parent through ``reports``."""
    from distrain.errors import classify
    from distrain.experiment import train_worker
    from distrain.plugins import import_plugins
    from distrain.training.preemption import Preempted

    try:
        import_plugins(include_packages)
        train_worker(world, config, serialization_dir, prepared, recover=recover)
    except Exception as error:  # noqa: BLE001 - classified errors are reported, the rest re-raised
        status, message = classify(error)
        if status is None or reports is None:
            raise
        reports.put((status, message, isinstance(error, Preempted)))
        raise SystemExit(status) from None


@contextlib.contextmanager
def forwarding_stop_signals() -> Iterator[None]:
    """While workers run, pass SIGTERM/SIGINT sent to the parent on to them, so they checkpoint
    and stop together instead of the parent dying first (a scheduler often signals only the parent)."""
    import multiprocessing
    import os
    import signal
    import threading

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


def run_as_launched(launched, config, resolved, serialization_dir: Path, args: argparse.Namespace) -> bool:
    """torchrun / srun started this process: join the job; rank 0 alone checks and prepares the folder.
    Returns whether this process is the job's primary."""
    from distrain.distributed.collectives import broadcast_object
    from distrain.distributed.launch import init_worker, shutdown_worker
    from distrain.distributed.world import World
    from distrain.experiment import train_worker

    distributed = resolved.distributed
    if distributed is not None and distributed.device_weights and len(distributed.device_weights) != launched.world_size:
        raise UsageError(
            f"distributed.device_weights: needs one weight per worker; {launched.launcher} started "
            f"{launched.world_size} processes, the config gives {len(distributed.device_weights)} weights"
        )
    if distributed is not None and len(distributed.cuda_devices) > launched.local_rank:
        device_id = distributed.cuda_devices[launched.local_rank]
    else:
        import torch

        device_id = launched.local_rank if torch.cuda.is_available() else -1
    world = World(
        rank=launched.rank,
        size=launched.world_size,
        local_rank=launched.local_rank,
        local_size=launched.local_world_size,
        device=f"cuda:{device_id}" if device_id >= 0 else "cpu",
        weights=tuple(distributed.device_weights) if distributed and distributed.device_weights else None,
    )
    backend = (distributed.backend if distributed and distributed.backend else None) or (
        "nccl" if device_id >= 0 else "gloo"
    )
    timeout = distributed.timeout if distributed else 1800.0
    init_method = f"tcp://{launched.master_addr}:{launched.master_port}"
    init_worker(world, backend, init_method, timeout, serialization_dir=None)
    try:
        from distrain.training.checkpointing import CheckpointError

        problem = None
        if world.is_primary:
            try:
                prepare_serialization_dir(serialization_dir, args.force, config, args.recover, world.size)
            except (UsageError, CheckpointError) as error:
                problem = str(error)
        problem = broadcast_object(problem)
        if problem:
            raise UsageError(problem)
        from distrain.distributed.launch import configure_worker_logging

        configure_worker_logging(world, serialization_dir)
        train_worker(world, config, serialization_dir, recover=args.recover)
    finally:
        shutdown_worker()
    return world.is_primary
