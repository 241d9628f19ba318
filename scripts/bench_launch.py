"""Launch latency: seconds from ``distrain train`` starting to the first optimizer step on every
one of 2 CPU workers, started the default way (from the preloaded fork server), forked from the
parent (``DISTRAIN_START_METHOD=fork``) or spawned (``spawn``).

Each run trains a tiny text classifier for one epoch (its data cached and its modules' bytecode
written by a first, untimed run, as for a user's second run); a callback in this module records
when each worker finishes its first step.
The start methods alternate for ``--repeats`` rounds; the median and range of each are printed, and
last ``launch_to_first_step_s=<median of the default>``.

    python scripts/bench_launch.py [--repeats 5]
    python scripts/bench_launch.py --quick    # a smoke run: one default launch, no cache-filling run
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from harness import clock_callback, environment, median_and_range, run_distrain, text_classifier_config, write_jsonl


def run(folder: Path, method: str) -> float:
    """Seconds from ``distrain train`` starting to the first optimizer step on both workers."""
    write_jsonl(folder / "train.jsonl", ({"text": f"good film {i}" if i % 2 else f"bad film {i}", "label": str(i % 2)}
                                         for i in range(200)))
    probe = folder / f"probe-{method}"
    probe.mkdir(exist_ok=True)
    for old in probe.iterdir():
        old.unlink()
    config = text_classifier_config(folder / "train.jsonl", embedding_dim=16, batch_size=8, trainer={
        "num_epochs": 1, "progress_bar": False, "callbacks": [clock_callback(first_step_folder=probe)]},
        distributed={"cuda_devices": [-1, -1]})
    (folder / "config.json").write_text(json.dumps(config))
    env = environment()
    env.pop("DISTRAIN_START_METHOD", None)
    # as on a user's machine, the first run leaves its modules' bytecode for the next ones (a sandbox's
    # PYTHONDONTWRITEBYTECODE would make every run compile every changed module again)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if method != "default":
        env["DISTRAIN_START_METHOD"] = method
    started = time.time()
    run_distrain(["train", folder / "config.json", "-s", folder / "out", "-f", "--include-package", "harness"], env,
                 what=f"the {method} launch")
    return max(float(path.read_text()) for path in probe.iterdir()) - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one default launch, no cache-filling run: a smoke run")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"default": []} if args.quick else {"default": [], "fork": [], "spawn": []}
    with tempfile.TemporaryDirectory(prefix="bench-launch-") as folder:
        if not args.quick:
            run(Path(folder), "default")  # fills the dataset cache, so every timed run starts alike
        for round_number in range(1 if args.quick else args.repeats):
            for method in times:
                seconds = run(Path(folder), method)
                times[method].append(seconds)
                print(f"round {round_number + 1}: {method}: {seconds:.2f} s to the first step on both workers", flush=True)
    summary = {method: median_and_range(values) for method, values in times.items()}
    median = {method: figures[0] for method, figures in summary.items()}
    for method, (middle, low, high) in summary.items():
        print(f"{method}: median {middle:.2f} s, range {low:.2f}-{high:.2f} s")
    if "spawn" in median:
        print(f"spawn_vs_default={median['spawn'] / median['default']:.2f}")
    print(f"launch_to_first_step_s={median['default']:.2f}")


if __name__ == "__main__":
    main()
