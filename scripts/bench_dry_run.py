"""Time and peak memory of ``distrain check`` dry runs at scale: the digits example at 1024 processes and
the MLM example at 64 (targets: under 15 s and 1.5 GB resident each). Each is run ``--repeats`` times in a
fresh process (the first also fills the dataset cache, reported apart). Last line: name=value.
``--quick``: the digits example at 8 processes, once, on data prepared in a temporary folder (a smoke run)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from harness import ROOT, environment, example_data

CASES = [("digits_1024", "configs/digits_mlp.jsonnet", "1024"), ("mlm_64", "configs/shakespeare_mlm.jsonnet", "64")]
QUICK = [("digits_8", "configs/digits_mlp.jsonnet", "8")]


def one(config: str, world: str, cache: str, cwd=ROOT) -> tuple[float, float]:
    """(seconds, peak resident MiB of the child) of one dry run."""
    env = environment(DISTRAIN_CACHE=cache, HF_HUB_OFFLINE="1")
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "distrain", "check", str(ROOT / config), "--world-size", world],
                             cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest child so far
    seconds = time.monotonic() - started
    if status != 0:
        raise SystemExit(child.stderr.read().decode())
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="digits at 8 processes, once: a smoke run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as examples:
        worst, cwd = 0.0, ROOT
        if args.quick:
            args.repeats, cwd = 1, example_data(examples, "digits")
        for name, config, world in QUICK if args.quick else CASES:
            cold = one(config, world, cache, cwd)
            runs = [one(config, world, cache, cwd) for _ in range(args.repeats)]
            seconds = [s for s, _ in runs]
            # ru_maxrss of children is the largest child so far: the peak over the runs
            rss = [m for _, m in runs]
            print(f"{name}: cold {cold[0]:.1f} s, {cold[1]:.0f} MiB; warm median {statistics.median(seconds):.1f} s "
                  f"(range {min(seconds):.1f}-{max(seconds):.1f}), peak RSS median {statistics.median(rss):.0f} MiB "
                  f"(range {min(rss):.0f}-{max(rss):.0f})")
            worst = max(worst, statistics.median(seconds))
    print(f"dry_run_worst_median_s={worst:.1f}")


if __name__ == "__main__":
    main()
