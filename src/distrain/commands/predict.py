"""``distrain predict ARCHIVE DATA --output-file F``: one JSON line per input, in input order."""

from __future__ import annotations

import argparse

from distrain.commands.arguments import add_archive_data_arguments, load_archive_job_from_args, run_archive_job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_archive_data_arguments(parser, "one JSON line per input, in input order")


def run(args: argparse.Namespace) -> int:
    job = load_archive_job_from_args(args, predicting=True)
    if job.distributed is not None and job.distributed.pipeline_parallel_size > 1:
        from distrain.errors import UsageError

        raise UsageError("distributed.pipeline_parallel_size: predict does not run a pipelined model (its stages "
                         "return a loss, not outputs); use tensor_parallel_size, data parallel workers or one process")
    from distrain.experiment.archive.jobs import predict_worker

    run_archive_job(job, predict_worker, args.output_file)
    print(f"wrote {len(job.dataset)} predictions to {args.output_file}")
    return 0
