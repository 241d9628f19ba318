"""Automatic shares on a heterogeneous pair: 2 CPU workers, one 3x slower per sample.

Both workers run a small feed-forward classifier whose training forward also sleeps a fixed time
per sample (0.5 ms; 1.5 ms on rank 1): the sleep stands in for a slower card, and makes the figure
about balancing rather than about how busy the shared machine is. The same steps are trained with
equal shares, with ``"device_weights": "auto"`` and with the oracle proportional shares ``[3, 1]``;
examples/s is timed inside the loop after ``--warmup`` steps (auto's calibration and first
re-balance included in the warm-up, its later re-balancing in the timing). Prints examples/s of each
and, last, ``auto_balance_recovery=<(auto - equal) / (oracle - equal)>`` (target >= 0.80).

    python scripts/bench_hetero.py              # the reported configuration
    python scripts/bench_hetero.py --steps 30   # a quicker run
    python scripts/bench_hetero.py --quick      # a smoke run: equal and auto only, 12 steps, timed after 7,
                                                # 0.2 ms a sample;
                                                # last line auto_vs_equal=<auto / equal examples/s>
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from harness import clock_callback, environment, feature_records, rate, read_clock, run_distrain, write_jsonl

BATCH_PER_WORKER = 32

try:  # registered when distrain's workers import this module (--include-package bench_hetero)
    import torch

    from distrain.models.feedforward_classifier import FeedForwardClassifier
    from distrain.models.model import Model

    @Model.register("bench_sleepy_classifier")
    class SleepyClassifier(FeedForwardClassifier):
        """Sleeps ``seconds_per_sample`` per sample in each training forward, ``slowdown`` times as
        long on rank ``slow_rank``."""

        def __init__(self, seconds_per_sample: float, slowdown: float = 3.0, slow_rank: int = 1, **kwargs) -> None:
            super().__init__(**kwargs)
            self.seconds_per_sample, self.slowdown, self.slow_rank = seconds_per_sample, slowdown, slow_rank

        def forward(self, features, label=None, **kwargs):
            if self.training:
                rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
                time.sleep(features.shape[0] * self.seconds_per_sample * (self.slowdown if rank == self.slow_rank else 1))
            return super().forward(features, label, **kwargs)

except ImportError:  # pragma: no cover - only when distrain itself is not importable
    pass


def write_data(folder: Path, count: int) -> Path:
    return write_jsonl(folder / "train.jsonl", feature_records(count))


def run(folder: Path, name: str, device_weights, steps: int, warmup: int, seconds_per_sample: float) -> float:
    """examples/s of the steps after ``warmup`` (rank 0's clock)."""
    timing = folder / f"{name}.json"
    config = {
        "dataset_reader": {"type": "feature_classification_json"},
        "train_data_path": str(folder / "train.jsonl"),
        "model": {"type": "bench_sleepy_classifier", "seconds_per_sample": seconds_per_sample, "input_dim": 64,
                  "feature_scale": 1 / 16, "feedforward": {"hidden_dims": [64], "activation": "relu"}},
        "data_loader": {"batch_size": BATCH_PER_WORKER, "shuffle": True},
        "trainer": {"optimizer": {"type": "sgd", "lr": 0.01}, "num_epochs": 1, "progress_bar": False,
                    "callbacks": [clock_callback(timing, warmup)]},
        "distributed": {"cuda_devices": [-1, -1]} | ({"device_weights": device_weights} if device_weights else {}),
    }
    (folder / f"{name}.config.json").write_text(json.dumps(config))
    env = environment(DISTRAIN_CACHE=str(folder / "cache"), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    run_distrain(["train", folder / f"{name}.config.json", "-s", folder / name, "--include-package", "bench_hetero"], env,
                 what=name, timeout=900)
    if name == "auto":
        shares = [line.split("balance at step ")[1] for line in (folder / name / "out_worker0.log").read_text().splitlines()
                  if "balance at step" in line]
        print(f"  auto re-balancing: {'; '.join(shares)}")
    return rate(read_clock(timing), BATCH_PER_WORKER * 2)  # two data-parallel workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=15)
    parser.add_argument("--seconds-per-sample", type=float, default=0.0005)
    parser.add_argument("--quick", action="store_true", help="equal and auto only, 12 steps timed after 7, last line auto_vs_equal: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.warmup, args.seconds_per_sample = 12, 7, 0.0002
    auto = {"type": "auto", "calibration_steps": 5, "rebalance_every": 5, "max_change": 0.25, "tolerance": 0.05}
    variants = (("equal", None), ("auto", auto)) + ((("oracle", [3, 1]),) if not args.quick else ())
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        write_data(folder, args.steps * BATCH_PER_WORKER * 2)
        speeds = {name: run(folder, name, weights, args.steps, args.warmup, args.seconds_per_sample)
                  for name, weights in variants}
    for name, speed in speeds.items():
        print(f"{name:7s} {speed:10.1f} examples/s")
    if args.quick:  # no oracle run to measure the recovery against
        print(f"auto_vs_equal={speeds['auto'] / speeds['equal']:.3f}")
        return
    print(f"auto_balance_recovery={(speeds['auto'] - speeds['equal']) / (speeds['oracle'] - speeds['equal']):.3f}")


if __name__ == "__main__":
    main()
