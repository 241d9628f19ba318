"""Peak memory of a streaming (``lazy``) loader stays flat as the file grows.

For each line count (default 100,000 and 1,000,000) a fresh process prepares the data the way
``distrain train`` does with ``"data_loader": {"lazy": true, "max_instances_in_memory": M}`` (one
counting pass for the vocabulary, nothing kept) and walks one epoch of batches; it prints the
peak RSS. Bounded memory means the two peaks are about equal, while the file is 10x larger: the last
line is ``peak_rss_largest_vs_smallest=<the largest file's peak / the smallest's>``.

Run: PYTHONPATH=src python scripts/bench_streaming_memory.py [--lines 100000 1000000] [--max-in-memory 2000]
     python scripts/bench_streaming_memory.py --quick    # a smoke run: 2,000 and 20,000 lines, 200 in memory
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import prepare, text_classifier_config, train_loader, write_jsonl


def generate(path: Path, lines: int) -> None:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(5000)]
    write_jsonl(path, ({"text": " ".join(rng.choices(words, k=rng.randint(4, 16))), "label": rng.choice(["a", "b"])}
                       for _ in range(lines)))


def measure(data: str, max_in_memory: int) -> dict:
    config = text_classifier_config(data, batch_size=64, dataset_cache=False, data_loader={
        "lazy": True, "max_instances_in_memory": max_in_memory})
    started = time.time()
    prepared = prepare(config)
    after_prepare = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    loader = train_loader(config, prepared)
    seen = sum(batch.size for batch in loader)
    return {"instances": seen, "peak_after_vocab_pass_mib": after_prepare,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "seconds": time.time() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--max-in-memory", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="2,000 and 20,000 lines, 200 in memory: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.lines, args.max_in_memory = [2000, 20000], 200
    peaks = {}
    with tempfile.TemporaryDirectory() as folder:
        for lines in args.lines:
            data = Path(folder) / f"data{lines}.jsonl"
            generate(data, lines)
            code = (f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_streaming_memory as b; "
                    f"print(json.dumps(b.measure({str(data)!r}, {args.max_in_memory})))")
            output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            result = json.loads(output.strip().splitlines()[-1])
            peaks[lines] = result["peak_rss_mib"]
            print(f"{lines:>9} lines ({data.stat().st_size / 2**20:5.0f} MiB): {result['instances']} instances, "
                  f"peak RSS {result['peak_rss_mib']:.0f} MiB (after the vocabulary pass "
                  f"{result['peak_after_vocab_pass_mib']:.0f} MiB), {result['seconds']:.0f} s")
            data.unlink()
    print(f"peak_rss_largest_vs_smallest={peaks[max(peaks)] / peaks[min(peaks)]:.3f}")


if __name__ == "__main__":
    main()
