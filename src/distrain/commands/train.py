"""``distrain train CONFIG -s DIR [--force | --recover]``: validate, set up the run folder, read the data once,
run the workers.

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
    """The stages, in order: validate the config, refuse GPUs the machine lacks, set up the run folder, read the
    data once from the frozen plan, run the workers."""
    from functools import partial
    from pathlib import Path

    from distrain.config.loading import load_config, parse_ext_vars
    from distrain.runtime.worker_server import start_worker_server

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = load_config(args.config, args.overrides, parse_ext_vars(args.ext_var))
    start_worker_server(config)  # its imports overlap ours, validation and data reading

    from distrain.compat import import_gc

    with import_gc.importing():  # torch and the components: many objects, next to no garbage
        from distrain.experiment.assemble import prepare_for_workers, train_worker
        from distrain.experiment.plan import validate_experiment
        from distrain.runtime import launch
        from distrain.job.stop import Preempted
        from distrain.training.run_dir import prepare_serialization_dir

        config, resolved = validate_experiment(config, args.include_package)  # 1. the only resolution
    refuse_missing_gpus(resolved)  # 2. before any data is read
    serialization_dir = Path(args.serialization_dir)
    new_folder = not args.recover and (not serialization_dir.exists() or not any(serialization_dir.iterdir()))
    try:
        # here, as the parent of spawned workers, or as a torchrun/srun rank; fresh, --recover or continued
        with launch.joined(resolved.distributed, serialization_dir, args.recover) as place:
            launch.set_up_output(place, partial(prepare_serialization_dir, serialization_dir, args.force, config,  # 3.
                                                args.recover))
            prepared = prepare_for_workers(resolved, place.world)  # 4. read once, from the frozen plan
            primary = launch.run_workers(place, train_worker, (prepared, resolved, serialization_dir),  # 5.
                                         tuple(args.include_package))
    except Preempted as stopped:
        raise Preempted(f"{stopped}; resume with: {resume_command(args)}") from None
    except BadInput:
        if new_folder:
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
    from distrain.job.history import HISTORY_FILE

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
