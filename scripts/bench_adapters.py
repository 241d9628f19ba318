"""Full fine-tuning vs LoRA (r 8) of MiniLM on the drug reviews, over 3 seeds: validation accuracy, trainable
parameters, optimizer-state bytes, checkpoint bytes, peak RSS and training examples per second.

    python scripts/prepare_data.py --only drug_reviews
    python scripts/bench_adapters.py [--seeds 13 14 15] [--quick]

Each run is ``distrain train`` of configs/drug_reviews_minilm.jsonnet (full) or
configs/drug_reviews_minilm_lora.jsonnet (LoRA) with ``trainer.random_seed`` set, as the configs say (2 CPU
processes). Figures per run: the best validation accuracy (metrics.json), trainable parameters and optimizer-state
bytes (the worker log's "rank 0 holds ..." after training: Adam's two moments of what trains), the last
checkpoint's bytes on disk (weights + training state), the largest resident set of any process of the run
(``ru_maxrss`` of the finished children), and training examples per second (training instances x epochs / the
training loop's time, validation included, in whole seconds). ``--quick``: 1 seed, 1 epoch, 8 training and 8
validation reviews cut at 32 tokens (one step of 8), float32, 1 process: a smoke check of the script, not a measurement
(without data under ``--data`` it prepares the reviews in a temporary folder). The last line is ``name=value``
pairs: medians over the seeds and the LoRA/full ratios.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, duration_seconds, environment, example_data

CONFIGS = {"full": ROOT / "configs" / "drug_reviews_minilm.jsonnet",
           "lora": ROOT / "configs" / "drug_reviews_minilm_lora.jsonnet"}


#: runs its arguments as a command and prints the largest resident set of its processes (ru_maxrss, KiB on Linux)
MEASURED = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
            "print(f'peak_rss_kib={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}', file=sys.stderr); "
            "sys.exit(code)")


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def run(name: str, seed: int, out: Path, overrides: dict, data: Path) -> dict:
    """One training run in a fresh process (its own peak RSS); its figures."""
    out.mkdir(parents=True, exist_ok=True)
    run_dir = out / f"{name}_{seed}"
    settings = {"trainer.random_seed": seed, **overrides}
    # run through a parent of its own, which reports the largest resident set among the run's processes
    command = [sys.executable, "-c", MEASURED, sys.executable, "-m", "distrain", "train", str(CONFIGS[name]),
               "-s", str(run_dir), "-o", json.dumps(settings)]
    result = subprocess.run(command, cwd=data, capture_output=True, text=True, env=environment())  # this checkout
    if result.returncode != 0:
        raise SystemExit(f"{name} seed {seed} failed:\n{result.stderr[-3000:]}")
    peak_kib = int(re.findall(r"peak_rss_kib=(\d+)", result.stderr)[-1])
    metrics = json.loads((run_dir / "metrics.json").read_text())
    log = (run_dir / "out_worker0.log").read_text()
    held = re.search(r"rank 0 holds parameters ([\d,]+) B, gradients ([\d,]+) B, optimizer state ([\d,]+) B", log)
    checkpoints = sorted(p for p in (run_dir / "checkpoints").iterdir() if p.is_dir() and p.name.startswith("epoch_"))
    epochs = metrics.get("epoch", 0) + 1
    training = duration_seconds(metrics["training_duration"])  # the training loop's, validation included
    instances = len((data / "data" / "drug_reviews" / "train.jsonl").read_text().splitlines())
    return {
        "accuracy": metrics["best_validation_accuracy"],
        "trainable": int(held.group(2).replace(",", "")) // 4,  # float32 gradients: one per trainable parameter
        "optimizer_bytes": int(held.group(3).replace(",", "")),
        "checkpoint_bytes": folder_bytes(checkpoints[-1]),
        "peak_rss_mib": peak_kib / 1024,
        "examples_per_s": instances * epochs / training,
    }


def small_copy(data: Path, folder: Path, count: int) -> Path:
    """``folder/data/drug_reviews/{train,validation}.jsonl``: the first ``count`` reviews of each."""
    target = folder / "data" / "drug_reviews"
    target.mkdir(parents=True)
    for split in ("train", "validation"):
        lines = (data / "data" / "drug_reviews" / f"{split}.jsonl").read_text().splitlines()[:count]
        (target / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[13, 14, 15])
    parser.add_argument("--data", type=Path, default=Path.cwd(), help="the folder holding data/drug_reviews/")
    parser.add_argument("--quick", action="store_true", help="1 seed, 1 epoch, 8 reviews of at most 32 tokens (one step), float32, 1 process: a smoke check")
    args = parser.parse_args()
    missing = not (args.data / "data" / "drug_reviews" / "train.jsonl").is_file()
    if missing and not args.quick:
        raise SystemExit(f"no {args.data}/data/drug_reviews/train.jsonl: run scripts/prepare_data.py --only drug_reviews")
    overrides: dict = {}
    seeds = args.seeds
    with tempfile.TemporaryDirectory(prefix="bench-adapters-") as scratch:
        scratch = Path(scratch)
        data = args.data
        if args.quick:
            if missing:
                args.data = example_data(scratch / "examples", "drug_reviews")
            seeds = seeds[:1]
            data = small_copy(args.data, scratch / "small", 8)
            # bfloat16 autocast on a CPU without AVX-512 takes seconds a step: quick trains in float32
            overrides = {"trainer.num_epochs": 1, "distributed": None, "data_loader.batch_size": 8,
                         "trainer.use_amp": False, "dataset_reader.tokenizer.max_length": 32}
        figures = {name: [run(name, seed, scratch / "runs", overrides, data) for seed in seeds] for name in CONFIGS}
    medians = {name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
               for name, runs in figures.items()}
    for name, runs in figures.items():
        for seed, figure in zip(seeds, runs):
            print(f"{name:5s} seed {seed}: " + ", ".join(f"{key} {value:,.4g}" for key, value in figure.items()))
    full, lora = medians["full"], medians["lora"]
    pairs = {f"{name}_{key}": value for name, values in medians.items() for key, value in values.items()}
    pairs.update({
        "accuracy_gap_points": 100 * (full["accuracy"] - lora["accuracy"]),
        "optimizer_state_ratio": lora["optimizer_bytes"] / full["optimizer_bytes"],
        "checkpoint_ratio": lora["checkpoint_bytes"] / full["checkpoint_bytes"],
        "seeds": len(seeds), "quick": int(args.quick),
    })
    print(" ".join(f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}" for key, value in pairs.items()))


if __name__ == "__main__":
    main()
