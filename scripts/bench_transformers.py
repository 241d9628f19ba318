"""Training throughput of the transformer example configs on 1 and 2 CPU workers (same global batch).

Runs ``distrain train`` on a slice of the data (``--instances``) for two epochs without validation
and reports examples/s of the second epoch (the first pays for start-up and warm-up), from the
``training_duration`` the trainer writes (to the microsecond).

    python scripts/bench_transformers.py --config configs/shakespeare_mlm.jsonnet --instances 640
    python scripts/bench_transformers.py --config configs/drug_reviews_minilm.jsonnet --instances 160
    python scripts/bench_transformers.py --quick    # a smoke run: the MLM example on 8 blocks of 32 tokens,
                                                    # global batch 4, float32, on 2 workers only

The last line is ``scaling_2_vs_1=<2 workers' examples/s / 1 worker's>`` (quick: ``examples_per_s_2_workers=``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from harness import ROOT, duration_seconds, environment, run_distrain


def run(config: str, workers: int, global_batch: int, instances: int, extra: dict) -> float:
    overrides = {
        "dataset_reader.max_instances": instances,
        "validation_data_path": None,
        "data_loader.batch_size": global_batch // workers,
        "data_loader.drop_last": True,
        "trainer.num_epochs": 2,
        "trainer.progress_bar": False,
        "distributed": {"cuda_devices": [-1] * workers} if workers > 1 else None,
        **extra,
    }
    with tempfile.TemporaryDirectory() as out:
        run_distrain(["train", config, "-s", out, "-o", json.dumps(overrides)], environment(HF_HUB_OFFLINE="1"),
                     what=f"{config} on {workers} worker(s)", cwd=ROOT, tail=2000)
        first = json.loads((Path(out) / "metrics_epoch_0.json").read_text())
        second = json.loads((Path(out) / "metrics_epoch_1.json").read_text())
    epoch_seconds = duration_seconds(second["training_duration"]) - duration_seconds(first["training_duration"])
    used = instances - instances % global_batch
    return used / max(epoch_seconds, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/shakespeare_mlm.jsonnet")
    parser.add_argument("--instances", type=int, default=640)
    parser.add_argument("--global-batch", type=int, default=32)
    parser.add_argument("--amp", choices=["on", "off"], help="force bfloat16 autocast on or off (default: the config's)")
    parser.add_argument("--quick", action="store_true", help="8 blocks of 32 tokens, global batch 4, float32 (--amp off), 2 workers only: a smoke run")
    args = parser.parse_args()
    if args.quick:
        # bfloat16 autocast on a CPU without AVX-512 takes seconds a step: quick trains in float32
        args.instances, args.global_batch, args.amp = 8, 4, args.amp or "off"
    extra = {"trainer.use_amp": args.amp == "on"} if args.amp else {}
    if args.quick:
        extra["dataset_reader.max_length"] = 32
    rates = {workers: run(args.config, workers, args.global_batch, args.instances, extra)
             for workers in ((2,) if args.quick else (1, 2))}
    print(f"{args.config}: {args.instances} instances, global batch {args.global_batch}, amp={args.amp or 'as configured'}")
    for workers, rate in rates.items():
        print(f"  {workers} CPU worker(s): {rate:.1f} examples/s")
    if args.quick:  # no 1-worker run to scale against
        print(f"examples_per_s_2_workers={rates[2]:.1f}")
        return
    print(f"  scaling 2 vs 1: {rates[2] / rates[1]:.2f}x")
    print(f"scaling_2_vs_1={rates[2] / rates[1]:.2f}")


if __name__ == "__main__":
    main()
