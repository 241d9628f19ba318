"""Option groups that several commands share, so each flag is spelled and documented once."""

from __future__ import annotations

import argparse


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="experiment file (jsonnet or JSON)")
    parser.add_argument(
        "-o", "--overrides", default=None,
        help='JSON object merged into the config; keys may be dotted paths, e.g. \'{"trainer.num_epochs": 3}\'',
    )
    parser.add_argument(
        "--ext-var", action="append", default=[], metavar="KEY=VALUE",
        help="a jsonnet std.extVar value (repeatable; environment variables are visible too)",
    )
    add_plugin_arguments(parser)


def add_plugin_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--include-package", action="append", default=[], metavar="MODULE",
        help="import MODULE first so its registered components exist (repeatable)",
    )


def add_archive_data_arguments(parser: argparse.ArgumentParser, output: str) -> None:
    parser.add_argument("archive", help="model.tar.gz written by distrain train")
    parser.add_argument("data", help="data file, read with the archive's (validation) dataset reader")
    parser.add_argument("--output-file", required=True, help=f"where to write {output}")
    parser.add_argument(
        "-o", "--overrides", default=None,
        help='JSON merged into the archived config, e.g. \'{"distributed": {"cuda_devices": [-1, -1]}}\'',
    )
    parser.add_argument("--batch-size", type=int, default=None, help="instances per worker per batch")
    add_plugin_arguments(parser)


def load_config_from_args(args: argparse.Namespace) -> dict:
    """The evaluated config of the config flags (jsonnet, ``--ext-var``, ``-o``); imports nothing heavy."""
    from distrain.config.loading import load_config, parse_ext_vars

    return load_config(args.config, args.overrides, parse_ext_vars(args.ext_var))


def load_experiment_from_args(args: argparse.Namespace, config: dict | None = None):
    """``(config, resolved)`` from the config flags (or the already evaluated ``config``): plugins
    imported, the whole tree validated."""
    from distrain.experiment.plan import validate_experiment

    return validate_experiment(config if config is not None else load_config_from_args(args), args.include_package)


def load_archive_job_from_args(args: argparse.Namespace, predicting: bool = False):
    """Plugins, overrides, archive and data of ``evaluate``/``predict``, all checked before any worker starts."""
    import glob
    from pathlib import Path

    from distrain.experiment.archive.format import ArchiveError
    from distrain.config.loading import parse_overrides
    from distrain.data.reader import DataError
    from distrain.errors import UsageError

    if args.batch_size is not None and args.batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, got {args.batch_size}")
    if not Path(args.archive).is_file():  # answered before torch is imported
        raise ArchiveError(f"{args.archive}: archive not found")
    if not Path(args.data).exists() and not glob.glob(args.data):  # a sharded reader reads a glob, as in training
        raise DataError(f"data file not found: {args.data}")
    overrides = parse_overrides(args.overrides)

    from distrain.experiment.archive.jobs import load_job
    from distrain.plugins import import_plugins

    import_plugins(args.include_package)
    return load_job(args.archive, args.data, overrides, args.batch_size, predicting)


def run_archive_job(job, worker, *args) -> None:
    """Run ``worker(world, job, *args)`` here, or on one spawned process per configured device."""
    from distrain.compat.deferred_compiler import compiler_loaded
    from distrain.runtime.launch import run_job
    from distrain.runtime.worker_server import use_worker_server

    if job.distributed is not None:
        # the workers unpickle the model built here, so they import what building it imported
        use_worker_server(with_compiler=compiler_loaded())
    run_job(worker, (job, *args), job.distributed)
