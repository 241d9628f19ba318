"""``distrain train CONFIG -s DIR [--force | --recover]``: validate, read the data once, run the workers.

A run stopped by a signal exits with status 1 and a message giving the exact ``--recover`` command.
"""

from __future__ import annotations

import argparse
import logging
import shlex

from distrain.commands.arguments import add_config_arguments
from distrain.errors import BadInput


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("-s", "--serialization-dir", required=True, help="output directory")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("-f", "--force", action="store_true", help="delete the output directory's contents first")
    mode.add_argument(
        "-r", "--recover", action="store_true",
        help="resume the run in the output directory from its latest checkpoint",
    )


def run(args: argparse.Namespace) -> int:
    import functools
    from pathlib import Path

    from distrain.config.loading import load_config, parse_ext_vars
    from distrain.runtime.worker_server import start_worker_server

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = load_config(args.config, args.overrides, parse_ext_vars(args.ext_var))
    start_worker_server(config)  # its imports overlap ours, validation and data reading

    from distrain.compat import import_gc

    with import_gc.importing():  # torch and the components: many objects, next to no garbage
        from distrain.experiment.assemble import train_worker
        from distrain.experiment.plan import validate_experiment
        from distrain.experiment.prepare import prepare_for_workers
        from distrain.runtime.launch import Job, run_job
        from distrain.training.preemption import Preempted
        from distrain.training.run_dir import prepare_serialization_dir

        config, resolved = validate_experiment(config, args.include_package)  # the only resolution
    refuse_missing_gpus(resolved)  # before any data is read
    serialization_dir = Path(args.serialization_dir)
    job = Job(
        work=train_worker,
        args=(resolved, serialization_dir, args.recover),
        distributed=resolved.distributed,
        serialization_dir=serialization_dir,
        include_packages=tuple(args.include_package),
        prepare=functools.partial(prepare_for_workers, resolved),
        setup_output=functools.partial(prepare_serialization_dir, serialization_dir, args.force, config, args.recover),
        restart=resume_after_restart,
    )
    fresh = not args.recover and (not serialization_dir.exists() or not any(serialization_dir.iterdir()))
    try:
        primary = run_job(job)
    except Preempted as stopped:
        raise Preempted(f"{stopped}; resume with: {resume_command(args)}") from None
    except BadInput:
        if fresh:
            remove_if_only_started(serialization_dir)
        raise
    if primary:
        print(f"training finished; outputs in {serialization_dir}")
    return 0


def remove_if_only_started(serialization_dir) -> None:
    """A new run stopped by bad input (a record, a file) before it trained leaves no folder behind: only
    its config, logs and history (started, stopped) were written. Anything more (a checkpoint, metrics) stays
    where it is."""
    import shutil

    from distrain.runtime.launch import LAUNCHED_JOB_FILE
    from distrain.training.history import HISTORY_FILE

    written = [path for path in serialization_dir.rglob("*") if path.is_file()]
    started = all(path.parent == serialization_dir and (path.name in ("config.json", LAUNCHED_JOB_FILE, HISTORY_FILE)
                  or (path.name.startswith("out_worker") and path.suffix == ".log")) for path in written)
    if serialization_dir.is_dir() and started:
        shutil.rmtree(serialization_dir, ignore_errors=True)


def refuse_missing_gpus(resolved) -> None:
    """A config naming GPUs this machine lacks is a config error now, not a worker's crash later."""
    from distrain.config.errors import ConfigError
    from distrain.distributed.devices import missing_gpu_problems

    problems = missing_gpu_problems(resolved)
    if problems:
        raise ConfigError(problems)


def resume_after_restart(job):
    """The training job again after a lost worker: from the latest checkpoint, if one was written."""
    import dataclasses

    from distrain.training.checkpointing import Checkpointer

    resolved, serialization_dir, _ = job.args
    has_checkpoint = Checkpointer(serialization_dir / "checkpoints").latest() is not None
    return dataclasses.replace(job, args=(resolved, serialization_dir, has_checkpoint))


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
