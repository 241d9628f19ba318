"""Launch latency: seconds from ``distrain train`` starting to the first optimizer step on every
one of 2 CPU workers, started the default way (from the preloaded fork server), forked from the
parent (``DISTRAIN_START_METHOD=fork``) or spawned (``spawn``).

Each run trains a tiny text classifier for one epoch (its data cached and its modules' bytecode
written by a first, untimed run, as for a user's second run); a callback in this module records
when each worker finishes its first step.
The start methods alternate for ``--repeats`` rounds; the median and range of each are printed, and
last ``launch_to_first_step_s=<median of the default>``.

    python scripts/bench_launch.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "scripts")]))
    environment.pop("DISTRAIN_START_METHOD", None)
    # as on a user's machine, the first run leaves its modules' bytecode for the next ones (a sandbox's
    # PYTHONDONTWRITEBYTECODE would make every run compile every changed module again)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    if method != "default":
        environment["DISTRAIN_START_METHOD"] = method
    started = time.time()
    result = subprocess.run([sys.executable, "-m", "distrain", "train", str(folder / "config.json"), "-s",
                             str(folder / "out"), "-f", "--include-package", "bench_launch"],
                            env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(result.stderr[-3000:])
    return max(float(path.read_text()) for path in probe.iterdir()) - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"default": [], "fork": [], "spawn": []}
    with tempfile.TemporaryDirectory(prefix="bench-launch-") as folder:
        run(Path(folder), "default")  # fills the dataset cache, so every timed run starts alike
        for round_number in range(args.repeats):
            for method in times:
                seconds = run(Path(folder), method)
                times[method].append(seconds)
                print(f"round {round_number + 1}: {method}: {seconds:.2f} s to the first step on both workers", flush=True)
    median = {method: statistics.median(values) for method, values in times.items()}
    for method, values in times.items():
        print(f"{method}: median {median[method]:.2f} s, range {min(values):.2f}-{max(values):.2f} s")
    print(f"spawn_vs_default={median['spawn'] / median['default']:.2f}")
    print(f"launch_to_first_step_s={median['default']:.2f}")


if __name__ == "__main__":
    main()
