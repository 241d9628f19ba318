"""How long ``distrain --help`` takes, this checkout against an earlier revision, in alternating rounds.

``--help`` is what a user's first contact with the command costs, and what every shell completion and
wrapper script pays: it must not import torch or the components. Each round starts the console script's
code path (``from distrain.cli import main; main()``) with ``--help`` in a fresh interpreter of this
environment, once with the revision's ``src/`` first on ``PYTHONPATH`` (exported with ``git archive``) and
once with this checkout's; bytecode is written by an untimed first run of each, as on a user's machine.

    python scripts/bench_help.py 483e0be^ --repeats 20   # before distrain's AllenNLP import hook
    python scripts/bench_help.py --quick                 # a smoke run: HEAD against this checkout, 2 rounds

Last line: ``help_after_vs_before=<median seconds here / median seconds at the revision>``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELP = "import sys; sys.argv = ['distrain', '--help']; from distrain.cli import main; main()"


def export(revision: str, folder: Path) -> Path:
    """``revision``'s ``src/`` in ``folder``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder / "src"


def seconds_to_help(src: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", HELP], env=env, cwd=src.parent, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or "usage" not in done.stdout.lower():
        raise SystemExit(f"distrain --help from {src} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", nargs="?", help="the earlier revision (a commit, branch or tag; --quick: HEAD)")
    parser.add_argument("--repeats", type=int, default=20, help="alternating rounds (default 20)")
    parser.add_argument("--quick", action="store_true", help="HEAD against this checkout, 2 rounds: a smoke run")
    args = parser.parse_args()
    if args.before is None and not args.quick:
        parser.error("name the earlier revision (a commit, branch or tag)")
    args.before, repeats = args.before or "HEAD", 2 if args.quick else args.repeats
    scratch = Path(tempfile.mkdtemp(prefix="bench-help-"))
    try:
        trees = {"before": export(args.before, scratch), "after": ROOT / "src"}
        times: dict[str, list[float]] = {"before": [], "after": []}
        for src in trees.values():
            seconds_to_help(src)  # bytecode written, files in the page cache
        for round_number in range(repeats):
            for side in ("before", "after") if round_number % 2 == 0 else ("after", "before"):
                times[side].append(seconds_to_help(trees[side]))
        medians = {}
        for side, values in times.items():
            values.sort()
            medians[side] = values[len(values) // 2]
            print(f"{side} ({args.before if side == 'before' else 'this checkout'}): median {medians[side]:.3f} s, "
                  f"range {values[0]:.3f}-{values[-1]:.3f} s over {len(values)} runs")
        print(f"help_after_vs_before={medians['after'] / medians['before']:.3f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
