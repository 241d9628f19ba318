"""Run the tests that wait on other processes (serving, the batcher, automatic shares, checkpoint atomicity) several
times in a row while busy loops hold every core, and count the rounds that pass.

A test that waits for a clock passes on a quiet machine and fails on a loaded one; these tests wait for events
(a log line, a file, a socket state) instead, and this script is the evidence: on a machine whose cores are all
taken by spinning processes, every round must pass.

    .venv/bin/python scripts/stress_tests.py                       # 10 rounds, one busy loop per core
    .venv/bin/python scripts/stress_tests.py --rounds 3 --busy 0   # quiet, for comparison
    .venv/bin/python scripts/stress_tests.py tests/serving/test_batcher.py
    .venv/bin/python scripts/stress_tests.py --quick               # one round of one fast file, one busy loop

Each round is one pytest run of the chosen files (``-n 2``, as the suite runs them). A failing round prints the
failed tests. Last line: ``stress_rounds_passed=PASSED/ROUNDS``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time

from harness import ROOT

#: the files whose tests wait on servers, workers and killed processes (issue 60: "no timing or chance in tests")
WAITING_TESTS = (
    "tests/serving/test_serve.py",
    # the generation server's one test that waits on a deadline (its others compare completions)
    "tests/serving/test_serve_generation.py::"
    "test_a_full_queue_answers_503_at_once_and_a_request_waiting_past_its_timeout_gets_504",
    "tests/serving/test_batcher.py",
    "tests/distributed/test_auto_balance.py",
    "tests/training/test_checkpoint_atomicity.py",
)


def spin() -> None:  # pragma: no cover - runs in a child process until terminated
    while True:
        pass


def one_round(files: list[str], workers: int, timeout: float) -> tuple[bool, float, list[str]]:
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers), "-rf", *files]
    try:
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, time.monotonic() - started, [f"round timed out after {timeout:.0f} s"]
    failed = [line for line in result.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    if result.returncode != 0 and not failed:
        failed = [(result.stdout + result.stderr)[-500:]]
    return result.returncode == 0, time.monotonic() - started, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", default=list(WAITING_TESTS), help="test files (default: the waiting ones)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 1, help="busy loops beside the tests "
                        "(default: one per core)")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist processes per round")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one round may take")
    parser.add_argument("--quick", action="store_true", help="a smoke run: one round of tests/data/test_epoch_order.py "
                        "in one test process beside one busy loop")
    args = parser.parse_args()
    if args.quick:
        args.files, args.rounds, args.busy, args.workers = ["tests/data/test_epoch_order.py"], 1, 1, 0
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for spinner in spinners:
        spinner.start()
    print(f"{args.busy} busy loop(s) on {os.cpu_count()} core(s); load average {os.getloadavg()[0]:.1f}; "
          f"{len(args.files)} file(s)", flush=True)
    passed = 0
    try:
        for number in range(1, args.rounds + 1):
            ok, seconds, failed = one_round(args.files, args.workers, args.timeout)
            passed += ok
            print(f"round {number}: {'pass' if ok else 'FAIL'} ({seconds:.0f} s, load average "
                  f"{os.getloadavg()[0]:.1f})", flush=True)
            for line in failed:
                print(f"  {line}", flush=True)
    finally:
        for spinner in spinners:
            spinner.terminate()
    print(f"stress_rounds_passed={passed}/{args.rounds}")


if __name__ == "__main__":
    main()
