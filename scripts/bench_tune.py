"""The drug-review searches of `distrain tune` (issue 16's figures); run on a quiet machine:

    /work/bin/cpuslot --all .venv/bin/python scripts/bench_tune.py --out runs/bench_tune

1. the hand-set configs/drug_reviews_boe.jsonnet, trained once (its best validation accuracy);
2. a 16-trial TPE search (seed 0) with the median pruner over configs/drug_reviews_boe_search.jsonnet,
   every trial with the config's own epochs, patience and seed;
3. best_config.json retrained alone: its accuracy must equal the best trial's exactly;
4. the same search without a pruner (same sampler seed): total epochs and best accuracy for comparison.

Needs the data: .venv/bin/python scripts/prepare_data.py. Last line: epoch_reduction=PERCENT.
``--quick``: steps 2 and 3 only (no hand-set run, no unpruned search), 1 trial of 1 epoch, on data prepared in a
temporary folder (a smoke run); last line retrained_equals_best_trial=.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from harness import ROOT, environment, example_data, run_distrain

CONFIG = str(ROOT / "configs" / "drug_reviews_boe.jsonnet")
SEARCH = str(ROOT / "configs" / "drug_reviews_boe_search.jsonnet")


def distrain(*args: str, env: dict, cwd: Path = ROOT) -> float:
    started = time.monotonic()
    run_distrain(args, env, capture=False, cwd=cwd, stdout=subprocess.DEVNULL if args[0] == "train" else None)
    return time.monotonic() - started


def best_accuracy(run_dir: Path) -> tuple[float, int]:
    metrics = json.loads((run_dir / "metrics.json").read_text())
    return metrics["best_validation_accuracy"], len(list(run_dir.glob("metrics_epoch_*.json")))


def search_figures(search_dir: Path) -> dict:
    rows = list(csv.DictReader(open(search_dir / "trials.csv")))
    complete = [r for r in rows if r["state"] == "COMPLETE"]
    best = max(complete, key=lambda r: float(r["value"]))
    return {
        "trials": len(rows),
        "states": {s: sum(r["state"] == s for r in rows) for s in sorted({r["state"] for r in rows})},
        "epochs": sum(int(r["epochs"] or 0) for r in rows),
        "best_number": int(best["number"]),
        "best_value": float(best["value"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="runs/bench_tune", help="output folder (emptied first)")
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="the pruned search (1 trial of 1 epoch) and its retraining only, data in a temporary folder: a smoke run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as scratch:
        search(args, Path(scratch))


def search(args: argparse.Namespace, scratch: Path) -> None:
    out, cwd = (ROOT / args.out).resolve(), ROOT
    if args.quick:
        args.trials, out, cwd = 1, scratch / "out", example_data(scratch, "drug_reviews")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = environment(DISTRAIN_CACHE=str(out / "cache"), HF_HUB_OFFLINE="1")
    settings = {"trainer.progress_bar": False, **({"trainer.num_epochs": 1} if args.quick else {})}
    quiet = json.dumps(settings)
    call = functools.partial(distrain, env=env, cwd=cwd)

    if not args.quick:
        seconds = call("train", CONFIG, "-s", str(out / "hand_set"), "-o", quiet)
        hand_set, hand_epochs = best_accuracy(out / "hand_set")
        print(f"hand-set config: best validation accuracy {hand_set:.4f} ({hand_epochs} epochs, {seconds:.0f} s)")

    common = [CONFIG, SEARCH, "--trials", str(args.trials), "--sampler", "tpe", "--seed", str(args.seed),
              *(["-o", quiet] if args.quick else [])]
    seconds = call("tune", *common, "-s", str(out / "median"), "--pruner", "median")
    pruned = search_figures(out / "median")
    print(f"TPE + median pruner: {pruned} ({seconds:.0f} s)")

    call("train", str(out / "median" / "best_config.json"), "-s", str(out / "best_retrained"), "-o", quiet)
    retrained, _ = best_accuracy(out / "best_retrained")
    print(f"best_config.json retrained: {retrained!r} vs best trial {pruned['best_value']!r}")
    if args.quick:
        print(f"retrained_equals_best_trial={retrained == pruned['best_value']}")
        return

    seconds = call("tune", *common, "-s", str(out / "no_pruner"), "--pruner", "none")
    unpruned = search_figures(out / "no_pruner")
    print(f"TPE without pruner: {unpruned} ({seconds:.0f} s)")

    reduction = 100 * (1 - pruned["epochs"] / unpruned["epochs"])
    print(f"hand_set_accuracy={hand_set:.4f}")
    print(f"tuned_best_accuracy={pruned['best_value']:.4f}")
    print(f"tuned_at_least_hand_set={pruned['best_value'] >= hand_set}")
    print(f"retrained_equals_best_trial={retrained == pruned['best_value']}")
    print(f"epochs_with_pruner={pruned['epochs']}")
    print(f"epochs_without_pruner={unpruned['epochs']}")
    print(f"best_without_pruner={unpruned['best_value']:.4f}")
    print(f"best_difference_points={100 * (unpruned['best_value'] - pruned['best_value']):.2f}")
    print(f"epoch_reduction={reduction:.1f}")


if __name__ == "__main__":
    main()
