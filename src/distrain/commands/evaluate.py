"""``distrain evaluate ARCHIVE DATA --output-file F``: the archived model's loss and metrics on DATA."""

from __future__ import annotations

import argparse
import json


def run(args: argparse.Namespace) -> int:
    from distrain.commands.predict import load_job_from_args

    job = load_job_from_args(args)
    from distrain.evaluation import evaluate_worker, launch, require_gold

    require_gold(job)
    launch(job, evaluate_worker, args.output_file)
    with open(args.output_file, encoding="utf-8") as written:
        print(json.dumps(json.load(written), indent=2))
    return 0
