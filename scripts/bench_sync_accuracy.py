"""What local SGD, DiLoCo and PowerSGD cost in accuracy: digits on 2 CPU workers, several seeds.

Trains ``configs/digits_mlp.jsonnet`` (Adam, batch 32 per worker, up to 20 epochs with patience 5)
with ``every_step``, ``local_sgd`` (``sync_every: 8``), ``diloco`` (``sync_every: 50``, outer SGD
lr 0.7 with Nesterov momentum 0.9) and ``powersgd`` compression (rank 2), each with ``--seeds``
random seeds, and prints each variant's mean best validation accuracy and its gap to every_step.
Last line ``worst_gap_points=<largest mean gap, in accuracy points>``.

    python scripts/bench_sync_accuracy.py --seeds 3
    python scripts/bench_sync_accuracy.py --quick    # a smoke run: 1 seed, 1 epoch, every_step and powersgd_2 only
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from harness import ROOT, environment, example_data, run_distrain

VARIANTS = {
    "every_step": {},
    "local_sgd_8": {"sync": {"type": "local_sgd", "sync_every": 8}},
    "diloco_50": {"sync": {"type": "diloco", "sync_every": 50}},
    "powersgd_2": {"gradient_compression": {"type": "powersgd", "rank": 2, "start_iter": 10}},
}
QUICK_VARIANTS = ("every_step", "powersgd_2")  # the reference and the one that changes the gradients themselves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1 seed, 1 epoch, every_step and powersgd_2 only: a smoke run")
    args = parser.parse_args()
    quick = {"trainer.num_epochs": 1} if args.quick else {}
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        env = environment(DISTRAIN_CACHE=str(folder / "cache"), HF_HUB_OFFLINE="1")
        example_data(folder, "digits")
        variants = {name: VARIANTS[name] for name in (QUICK_VARIANTS if args.quick else VARIANTS)}
        accuracy: dict[str, list[float]] = {name: [] for name in variants}
        for seed in range(1 if args.quick else args.seeds):
            for name, block in variants.items():
                overrides = {"distributed": {"cuda_devices": [-1, -1]} | block, "trainer.random_seed": 13 + seed,
                             "trainer.progress_bar": False, **quick}
                run = folder / f"{name}_{seed}"
                run_distrain(["train", ROOT / "configs" / "digits_mlp.jsonnet", "-s", run, "-o", json.dumps(overrides)],
                             env, what=f"{name} seed {seed}", cwd=folder, timeout=900)
                accuracy[name].append(json.loads((run / "metrics.json").read_text())["best_validation_accuracy"])
                print(f"seed {seed} {name:12s} best validation accuracy {accuracy[name][-1]:.4f}", flush=True)
    reference = statistics.mean(accuracy["every_step"])
    gaps = {}
    for name, values in accuracy.items():
        gaps[name] = 100 * (reference - statistics.mean(values))
        print(f"{name:12s} mean {statistics.mean(values):.4f}  range {min(values):.4f}-{max(values):.4f}  "
              f"gap {gaps[name]:+.2f} points")
    print(f"worst_gap_points={max(gaps.values()):.2f}")


if __name__ == "__main__":
    main()
