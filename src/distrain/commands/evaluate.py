"""``distrain evaluate ARCHIVE DATA --output-file F``: the archived model's loss and metrics on DATA."""

from __future__ import annotations

import argparse
import json

from distrain.commands.arguments import add_archive_data_arguments, load_archive_job_from_args, run_archive_job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_archive_data_arguments(parser, "the metrics as JSON")


def run(args: argparse.Namespace) -> int:
    job = load_archive_job_from_args(args)
    from distrain.experiment.archive.jobs import evaluate_worker, require_gold

    import time

    from distrain.training.summary import evaluation_rows, render_table

    require_gold(job)
    started = time.monotonic()
    run_archive_job(job, evaluate_worker, args.output_file)
    seconds = time.monotonic() - started
    with open(args.output_file, encoding="utf-8") as written:
        metrics = json.load(written)
    print(json.dumps(metrics, indent=2))
    rows = evaluation_rows(metrics, seconds, len(job.dataset), args.archive, args.output_file)
    print(render_table(f"evaluation summary ({args.data})", rows))
    return 0
