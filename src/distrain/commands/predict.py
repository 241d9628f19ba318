"""``distrain predict ARCHIVE DATA --output-file F``: one JSON line per input, in input order."""

from __future__ import annotations

import argparse

from distrain.errors import UsageError


def load_job_from_args(args: argparse.Namespace):
    """Plugins, overrides, archive and data, all checked before any worker starts."""
    from pathlib import Path

    from distrain.archive import ArchiveError
    from distrain.config.loading import parse_overrides
    from distrain.data.reader import DataError

    if args.batch_size is not None and args.batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, got {args.batch_size}")
    if not Path(args.archive).is_file():  # answered before torch is imported
        raise ArchiveError(f"{args.archive}: archive not found")
    if not Path(args.data).exists():
        raise DataError(f"data file not found: {args.data}")
    overrides = parse_overrides(args.overrides)

    from distrain.evaluation import load_job
    from distrain.plugins import import_plugins

    import_plugins(args.include_package)
    return load_job(args.archive, args.data, overrides, args.batch_size)


def run(args: argparse.Namespace) -> int:
    job = load_job_from_args(args)
    from distrain.evaluation import launch, predict_worker

    launch(job, predict_worker, args.output_file)
    print(f"wrote {len(job.dataset)} predictions to {args.output_file}")
    return 0
