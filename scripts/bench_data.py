"""Benchmark the shared dataset cache: memory per worker and time to first batch.

Generates a JSON-lines text-classification file of ``--size-mb`` MB, then runs three scenarios,
each in a fresh process that does what ``distrain train`` does with 2 CPU workers (prepare the data
in the parent, spawn the workers, build each worker's loader) and then walks one epoch of batches
without a model, so the figures are the data path's alone:

- ``no-cache``: ``DISTRAIN_CACHE=off``, the parent pickles its in-memory dataset to each worker;
- ``cold``: an empty cache: the parent reads, writes the cache entry and the workers map it;
- ``warm``: the same cache again: nothing is read, the workers map the entry.

The last line is the cold run's parent peak RSS (``cold_parent_peak_mib=``), which streaming the
records into the cache keeps bounded whatever the input size. Per worker it prints the peak RSS, and at the end of the epoch the proportional (PSS) and private
memory (mapped cache pages are shared, so they count once across workers in PSS, not per worker),
plus seconds from process start to the worker's first batch.

Run: PYTHONPATH=src python scripts/bench_data.py --size-mb 200   (use --size-mb 5 for a quick check,
     --quick for a smoke run of 0.5 MB)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [f"w{i}" for i in range(20000)]


def generate(path: Path, size_mb: float, seed: int = 0) -> int:
    rng = random.Random(seed)
    target = int(size_mb * 1024 * 1024)
    written = lines = 0
    with open(path, "w") as out:
        while written < target:
            text = " ".join(rng.choices(WORDS, k=rng.randint(8, 40)))
            line = json.dumps({"text": text, "label": rng.choice(["pos", "neg", "neu"])}) + "\n"
            out.write(line)
            written += len(line)
            lines += 1
    return lines


def memory_now() -> dict[str, float]:
    """PSS and private memory of this process in MiB (Linux smaps_rollup)."""
    values = {}
    with open("/proc/self/smaps_rollup") as rollup:
        for line in rollup:
            parts = line.split()
            if parts[0] in ("Rss:", "Pss:", "Private_Clean:", "Private_Dirty:"):
                values[parts[0][:-1]] = int(parts[1]) / 1024
    return {"rss_mib": values["Rss"], "pss_mib": values["Pss"],
            "private_mib": values["Private_Clean"] + values["Private_Dirty"]}


def peak_rss_mib() -> float:
    """VmHWM: this process's own peak (``ru_maxrss`` would carry the parent's across spawn's exec)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(world, prepared, config, started: float, out_dir: str) -> None:
    from distrain.data.loader import DataLoader, DataLoaderConfig

    loader = DataLoader(prepared.train, DataLoaderConfig(**config["data_loader"]), world, seed=0)
    batches = iter(loader)
    next(batches)
    first_batch_s = time.time() - started
    count = 1 + sum(1 for _ in batches)
    result = {"rank": world.rank, "mapped": prepared.train.source is not None, "first_batch_s": first_batch_s, "batches": count,
              "peak_rss_mib": peak_rss_mib(), **memory_now()}
    Path(out_dir, f"worker{world.rank}.json").write_text(json.dumps(result))


def scenario(data: str, out_dir: str, started: float) -> None:
    """One run, in this (fresh) process: prepare in the parent, spawn 2 workers."""
    from harness import prepare, text_classifier_config  # here, so the workers import no more than they did

    from distrain.distributed.config import DistributedConfig
    from distrain.runtime.spawn import spawn

    config = text_classifier_config(data, batch_size=256)
    prepared = prepare(config, cache=True)
    prepared_s = time.time() - started
    parent = {"prepared_s": prepared_s, "parent_peak_rss_mib": peak_rss_mib()}
    spawn(worker, (prepared, config, started, out_dir), DistributedConfig(cuda_devices=[-1, -1]), None)
    Path(out_dir, "parent.json").write_text(json.dumps(parent))


def run_scenario(name: str, data: Path, cache: str, work: Path) -> dict:
    out_dir = work / name
    out_dir.mkdir()
    env = {**os.environ, "DISTRAIN_CACHE": cache}
    code = f"import sys, time; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_data; " \
           f"bench_data.scenario({str(data)!r}, {str(out_dir)!r}, {{started}})"
    started = time.time()
    subprocess.run([sys.executable, "-c", code.replace("{started}", repr(started))], env=env, check=True)
    wall = time.time() - started
    workers = [json.loads(p.read_text()) for p in sorted(out_dir.glob("worker*.json"))]
    return {"name": name, "wall_s": wall, **json.loads((out_dir / "parent.json").read_text()), "workers": workers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=5.0, help="size of the generated dataset (200 for the full run)")
    parser.add_argument("--work-dir", default=None, help="where to put the data and cache (default: a temp dir)")
    parser.add_argument("--quick", action="store_true", help="0.5 MB of data: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.size_mb = 0.5
    with tempfile.TemporaryDirectory(dir=args.work_dir) as folder:
        work = Path(folder)
        data = work / "train.jsonl"
        lines = generate(data, args.size_mb)
        print(f"dataset: {data.stat().st_size / 2**20:.0f} MiB, {lines} records; 2 CPU workers")
        results = [
            run_scenario("no-cache", data, "off", work),
            run_scenario("cold", data, str(work / "cache"), work),
            run_scenario("warm", data, str(work / "cache"), work),
        ]
        print(f"{'scenario':9} {'prepare s':>9} {'1st batch s':>11} {'parent peak':>11} "
              f"{'worker peak RSS':>15} {'worker PSS':>10} {'worker private':>14} mapped")
        for r in results:
            w = r["workers"]
            print(f"{r['name']:9} {r['prepared_s']:9.1f} {max(x['first_batch_s'] for x in w):11.1f} "
                  f"{r['parent_peak_rss_mib']:9.0f} M {max(x['peak_rss_mib'] for x in w):13.0f} M "
                  f"{max(x['pss_mib'] for x in w):8.0f} M {max(x['private_mib'] for x in w):12.0f} M {all(x['mapped'] for x in w)}")
        base, warm = results[0], results[2]
        ratio = max(x["private_mib"] for x in base["workers"]) / max(1e-9, max(x["private_mib"] for x in warm["workers"]))
        speed = max(x["first_batch_s"] for x in results[1]["workers"]) / max(x["first_batch_s"] for x in warm["workers"])
        print(f"worker private memory, no cache / cached: {ratio:.2f}x; time to first batch, first / cached run: {speed:.2f}x")
        # the cold run streams the records into the cache entry: its parent stays bounded whatever the size
        print(f"cold_parent_peak_mib={results[1]['parent_peak_rss_mib']:.0f}")


if __name__ == "__main__":
    main()
