"""``distrain plot RUN_DIR [RUN_DIR ...] -o curves.png [--metrics loss,accuracy]``: per-epoch curves."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="serialization folders of training runs")
    parser.add_argument("-o", "--output", default="curves.png", help="image to write (default: curves.png)")
    parser.add_argument("--metrics", default=None,
                        help="comma-separated metric names, e.g. loss,accuracy (default: every metric found)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from distrain.errors import UsageError
    from distrain.training.curves import plot_runs

    for run_dir in args.run_dirs:
        if not Path(run_dir).is_dir():
            raise UsageError(f"{run_dir}: not a folder")
    metrics = [name.strip() for name in args.metrics.split(",") if name.strip()] if args.metrics else None
    print(f"wrote {plot_runs(args.run_dirs, args.output, metrics)}")
    return 0
