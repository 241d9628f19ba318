"""Benchmarks before and after a change: each named script run on two revisions of this repository, alternating
revision by revision for ``--rounds`` rounds, with the same interpreter and nothing else of this script's running.

Each revision is exported (``git archive``) into a scratch folder beside the others, with this checkout's ``data/``
and ``.cache/`` linked in, and its own script is run there (its ``harness.py`` puts that tree's ``src/`` first, for
its workers too). A script's last line is its figure (``name=value``); the table gives every round's figure per
revision, and whether after's median lies within before's range (the machine's own noise) or outside it.

    python scripts/bench_before_after.py BEFORE [--after HEAD] --rounds 2 \\
        --bench "bench_launch.py --repeats 3" --bench "bench_overhead.py --repeats 3"
    python scripts/bench_before_after.py --quick    # a smoke run: HEAD against itself, bench_launch --quick

Last line: ``after_outside_before_range=K/N`` (K of the N benchmarks whose after median falls outside before's
range; the direction of each difference is in the table).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, median_and_range


def export(revision: str, folder: Path) -> Path:
    """``revision``'s tracked files in ``folder``, with this checkout's prepared data and caches linked in."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    for shared in ("data", ".cache"):
        if (ROOT / shared).exists() and not (folder / shared).exists():
            (folder / shared).symlink_to(ROOT / shared)
    return folder


def figure(tree: Path, bench: str) -> tuple[str, float]:
    """Run ``bench`` (a script of ``tree``'s scripts/ with its arguments) and read its last ``name=value`` line."""
    script, *arguments = shlex.split(bench)
    # the tree's src/ on PYTHONPATH from the start: anything the interpreter imports before the script runs (the
    # environment's .pth line) then comes from this tree too, never from the checkout the venv was installed from
    path = os.pathsep.join(filter(None, [str(tree / "src"), str(tree / "scripts"), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, str(tree / "scripts" / script), *arguments], cwd=tree,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})
    lines = [line for line in done.stdout.splitlines() if "=" in line]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{bench} on {tree.name} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    name, _, value = lines[-1].partition("=")
    return name, float(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", nargs="?", help="the revision before (a commit, branch or tag; --quick: HEAD)")
    parser.add_argument("--after", default="HEAD", help="the revision after (default HEAD)")
    parser.add_argument("--bench", action="append", help='a script of scripts/ and its arguments (repeatable)')
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (default 2)")
    parser.add_argument("--quick", action="store_true", help="one round of bench_launch.py --quick: a smoke run")
    args = parser.parse_args()
    if args.before is None and not args.quick:
        parser.error("name the revision before (a commit, branch or tag)")
    args.before = args.before or "HEAD"
    benches = ["bench_launch.py --quick"] if args.quick else (args.bench or ["bench_overhead.py --repeats 3"])
    rounds = 1 if args.quick else args.rounds

    scratch = Path(tempfile.mkdtemp(prefix="before-after-"))
    try:
        trees = {"before": export(args.before, scratch / "before"), "after": export(args.after, scratch / "after")}
        results: dict[str, dict[str, list[float]]] = {bench: {"before": [], "after": []} for bench in benches}
        names: dict[str, str] = {}
        for round_number in range(rounds):
            for bench in benches:
                for side in ("before", "after") if round_number % 2 == 0 else ("after", "before"):
                    names[bench], value = figure(trees[side], bench)
                    results[bench][side].append(value)
                    print(f"round {round_number + 1} {side:6} {bench}: {names[bench]}={value:g}", flush=True)
        outside = 0
        print(f"\nbefore {args.before}, after {args.after}, {rounds} round(s), alternating")
        for bench, sides in results.items():
            before = median_and_range(sides["before"])
            after = median_and_range(sides["after"])
            within = before[1] <= after[0] <= before[2]
            outside += not within
            print(f"{bench}: {names[bench]} before {before[0]:g} [{before[1]:g}-{before[2]:g}], "
                  f"after {after[0]:g} [{after[1]:g}-{after[2]:g}]: after's median "
                  f"{'within' if within else 'outside'} before's range")
        print(f"after_outside_before_range={outside}/{len(benches)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
