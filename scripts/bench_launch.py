"""Launch latency: seconds from ``distrain train`` starting to the first optimizer step on every
one of 2 CPU workers, with the workers forked (the default for CPU runs) or spawned (as for CUDA).

Each run trains a tiny text classifier for one epoch; a callback in this module records when each
worker finishes its first step. The start methods alternate for ``--repeats`` rounds and the fastest
run of each is kept (the one least disturbed by other work on a shared machine).

    python scripts/bench_launch.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

try:  # registered when distrain's workers import this module (--include-package bench_launch)
    from distrain.training.callback import Callback

    @Callback.register("bench_first_step")
    class FirstStep(Callback):
        """Each worker writes the wall-clock time of its first optimizer step."""

        def __init__(self, folder: str) -> None:
            self.folder = folder

        def on_step(self, trainer, step, loss) -> None:
            if step == 1:
                Path(self.folder, f"first_step_rank{trainer.world.rank}").write_text(repr(time.time()))
except ImportError:  # pragma: no cover - only when distrain itself is not importable
    pass


def run(folder: Path, method: str) -> float:
    records = "".join(json.dumps({"text": f"good film {i}" if i % 2 else f"bad film {i}", "label": str(i % 2)}) + "\n"
                      for i in range(200))
    (folder / "train.jsonl").write_text(records)
    probe = folder / f"probe-{method}"
    probe.mkdir(exist_ok=True)
    for old in probe.iterdir():
        old.unlink()
    config = {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(folder / "train.jsonl"),
        "model": {"type": "basic_classifier", "embedding_dim": 16, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "progress_bar": False, "callbacks": [{"type": "bench_first_step", "folder": str(probe)}]},
        "distributed": {"cuda_devices": [-1, -1]},
    }
    (folder / "config.json").write_text(json.dumps(config))
    environment = dict(os.environ, DISTRAIN_START_METHOD=method,
                       PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "scripts")]))
    started = time.time()
    result = subprocess.run([sys.executable, "-m", "distrain", "train", str(folder / "config.json"), "-s",
                             str(folder / "out"), "-f", "--include-package", "bench_launch"],
                            env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(result.stderr[-3000:])
    return max(float(path.read_text()) for path in probe.iterdir()) - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    best = {"fork": float("inf"), "spawn": float("inf")}
    with tempfile.TemporaryDirectory(prefix="bench-launch-") as folder:
        for round_number in range(args.repeats):
            for method in best:
                seconds = run(Path(folder), method)
                best[method] = min(best[method], seconds)
                print(f"round {round_number + 1}: {method}: {seconds:.2f} s to the first step on both workers", flush=True)
    for method, seconds in best.items():
        print(f"launch_to_first_step_{method}_s={seconds:.2f}")
    print(f"spawn_vs_fork={best['spawn'] / best['fork']:.2f}")


if __name__ == "__main__":
    main()
