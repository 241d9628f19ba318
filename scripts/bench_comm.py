"""Slow links: every-step gradient averaging against local SGD and bf16 compression at 1 Gbit/s.

Two CPU workers (one torch thread each) train a MiniLM-sized feed-forward classifier (64 -> 4096 ->
4096 -> 1344 -> 10: 22.6 M parameters, as many floats as MiniLM) inside a network namespace whose
loopback is limited to 1 Gbit/s by a ``tbf`` qdisc (``tc netem`` is missing from this kernel; the MTU
is set to 1500 first, or connections stall). It needs root: the script re-runs itself under
``unshare -n``. steps/s is timed inside the loop over steps 9..24 (local SGD's averages at steps 16
and 24 included). Prints steps/s for ``every_step``, ``local_sgd`` (``sync_every: 8``) and ``bf16``
compression and, last, ``local_sgd_speedup_1gbit=<local_sgd / every_step>`` (target >= 2.0).

    sudo python scripts/bench_comm.py               # the reported configuration (needs root)
    python scripts/bench_comm.py --no-limit         # plain loopback, no namespace (no root needed)
    python scripts/bench_comm.py --quick            # a smoke run: plain loopback, 64-wide model, 12 steps,
                                                    # every_step and local_sgd only (no bf16 run)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import clock_callback, environment, feature_records, rate, read_clock, run_distrain, write_jsonl

BATCH_PER_WORKER, WARMUP, STEPS = 16, 8, 24
HIDDEN = [4096, 4096, 1344]
QUICK = {"warmup": 4, "steps": 12, "hidden": [64], "variants": ("every_step", "local_sgd")}
VARIANTS = {
    "every_step": {},
    "local_sgd": {"sync": {"type": "local_sgd", "sync_every": 8}},
    "bf16": {"gradient_compression": {"type": "bf16"}},
}


def limit_loopback(rate: str) -> None:
    """Inside the new network namespace: bring ``lo`` up at MTU 1500 behind a token bucket."""
    for command in (["ip", "link", "set", "lo", "mtu", "1500"], ["ip", "link", "set", "lo", "up"],
                    ["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, "burst", "256kb", "latency", "100ms"]):
        subprocess.run(command, check=True)


def run(folder: Path, name: str, distributed: dict, warmup: int = WARMUP, hidden: list[int] = HIDDEN) -> float:
    """steps/s of steps ``warmup`` + 1 .. the last (rank 0's clock)."""
    timing = folder / f"{name}.json"
    config = {
        "dataset_reader": {"type": "feature_classification_json"},
        "train_data_path": str(folder / "train.jsonl"),
        "model": {"type": "feedforward_classifier", "input_dim": 64, "feature_scale": 1 / 16,
                  "feedforward": {"hidden_dims": hidden, "activation": "relu"}},
        "data_loader": {"batch_size": BATCH_PER_WORKER, "shuffle": True},
        "trainer": {"optimizer": {"type": "sgd", "lr": 0.01, "momentum": 0.9}, "num_epochs": 1, "progress_bar": False,
                    "callbacks": [clock_callback(timing, warmup)]},
        "distributed": {"cuda_devices": [-1, -1]} | distributed,
    }
    (folder / f"{name}.config.json").write_text(json.dumps(config))
    env = environment(DISTRAIN_CACHE=str(folder / "cache"), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    run_distrain(["train", folder / f"{name}.config.json", "-s", folder / name, "--include-package", "harness"], env,
                 what=name, timeout=1200)
    metrics = json.loads((folder / name / "metrics.json").read_text())
    speed = rate(read_clock(timing), 1)
    print(f"{name:10s} {speed:7.3f} steps/s   sync_count {metrics['sync_count']:3d}   "
          f"sync_bytes {metrics['sync_bytes'] / 1e6:9.1f} MB", flush=True)
    return speed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-limit", action="store_true", help="plain loopback (no namespace, no root)")
    parser.add_argument("--rate", default="1gbit")
    parser.add_argument("--quick", action="store_true", help="plain loopback, a 64-wide model, 12 steps, no bf16 run: a smoke run")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = QUICK if args.quick else {"warmup": WARMUP, "steps": STEPS, "hidden": HIDDEN, "variants": tuple(VARIANTS)}
    if not (args.no_limit or args.quick or args.inside):
        if os.geteuid() != 0:
            raise SystemExit("bench_comm.py needs root for unshare -n (or pass --no-limit)")
        os.execvp("unshare", ["unshare", "-n", sys.executable, __file__, "--inside", "--rate", args.rate])
    if args.inside:
        limit_loopback(args.rate)
        print(f"loopback limited to {args.rate} (tbf, MTU 1500) in a new network namespace")
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        write_jsonl(folder / "train.jsonl", feature_records(sizes["steps"] * BATCH_PER_WORKER * 2))
        speeds = {name: run(folder, name, VARIANTS[name], sizes["warmup"], sizes["hidden"]) for name in sizes["variants"]}
    print(f"local_sgd_speedup_1gbit={speeds['local_sgd'] / speeds['every_step']:.2f}")


if __name__ == "__main__":
    main()
