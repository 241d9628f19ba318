"""Training throughput of the transformer example configs on 1 and 2 CPU workers (same global batch).

Runs ``distrain train`` on a slice of the data (``--instances``) for two epochs without validation
and reports examples/s of the second epoch (the first pays for start-up and warm-up), from the
``training_duration`` the trainer writes (whole seconds: keep epochs at 30 s or more).

    python scripts/bench_transformers.py --config configs/shakespeare_mlm.jsonnet --instances 640
    python scripts/bench_transformers.py --config configs/drug_reviews_minilm.jsonnet --instances 160
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seconds(duration: str) -> int:
    hours, minutes, secs = (int(part) for part in duration.split(":"))
    return hours * 3600 + minutes * 60 + secs


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
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
        result = subprocess.run(
            [sys.executable, "-m", "distrain", "train", config, "-s", out, "-o", json.dumps(overrides)],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )
        if result.returncode != 0:
            sys.exit(result.stderr[-2000:])
        first = json.loads((Path(out) / "metrics_epoch_0.json").read_text())
        second = json.loads((Path(out) / "metrics_epoch_1.json").read_text())
    epoch_seconds = seconds(second["training_duration"]) - seconds(first["training_duration"])
    used = instances - instances % global_batch
    return used / max(epoch_seconds, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/shakespeare_mlm.jsonnet")
    parser.add_argument("--instances", type=int, default=640)
    parser.add_argument("--global-batch", type=int, default=32)
    parser.add_argument("--amp", choices=["on", "off"], help="force bfloat16 autocast on or off (default: the config's)")
    args = parser.parse_args()
    extra = {"trainer.use_amp": args.amp == "on"} if args.amp else {}
    rates = {workers: run(args.config, workers, args.global_batch, args.instances, extra) for workers in (1, 2)}
    print(f"{args.config}: {args.instances} instances, global batch {args.global_batch}, amp={args.amp or 'as configured'}")
    for workers, rate in rates.items():
        print(f"  {workers} CPU worker(s): {rate:.1f} examples/s")
    print(f"  scaling 2 vs 1: {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
