"""``distrain evaluate ARCHIVE DATA --output-file F``: the archived model's loss and metrics on DATA."""

from __future__ import annotations

import argparse
import json

from distrain.commands.arguments import add_archive_data_arguments, load_archive_job_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_archive_data_arguments(parser, "the metrics as JSON")


def run(args: argparse.Namespace) -> int:
    job = load_archive_job_from_args(args)
    from distrain.inference import evaluate_worker, launch, require_gold

    require_gold(job)
    launch(job, evaluate_worker, args.output_file)
    with open(args.output_file, encoding="utf-8") as written:
        print(json.dumps(json.load(written), indent=2))
    return 0
