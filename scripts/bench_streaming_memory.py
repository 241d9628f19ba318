"""Peak memory of a streaming (``lazy``) loader stays flat as the file grows.

For each line count (default 100,000 and 1,000,000) a fresh process prepares the data the way
``distrain train`` does with ``"data_loader": {"lazy": true, "max_instances_in_memory": M}`` (one
counting pass for the vocabulary, nothing kept) and walks one epoch of batches; it prints the
peak RSS. Bounded memory means the two peaks are about equal, while the file is 10x larger.

Run: PYTHONPATH=src python scripts/bench_streaming_memory.py [--lines 100000 1000000] [--max-in-memory 2000]
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


def generate(path: Path, lines: int) -> None:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(5000)]
    with open(path, "w") as out:
        for _ in range(lines):
            out.write(json.dumps({"text": " ".join(rng.choices(words, k=rng.randint(4, 16))),
                                  "label": rng.choice(["a", "b"])}) + "\n")


def measure(data: str, max_in_memory: int) -> dict:
    from distrain.experiment.prepare import DataPlan, prepare_data
    from distrain.experiment.plan import resolve_experiment
    from distrain.experiment.assemble import make_loader
    from distrain.plugins import import_plugins

    import_plugins()
    config = {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": data,
        "model": {"type": "basic_classifier", "embedding_dim": 8, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 64, "lazy": True, "max_instances_in_memory": max_in_memory},
        "dataset_cache": False,
    }
    started = time.time()
    experiment = resolve_experiment(config).build()
    prepared = prepare_data(DataPlan.of(experiment))
    after_prepare = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    loader = make_loader(prepared.train, experiment.dataset_reader, prepared.vocab, experiment.data_loader, _single(), 0)
    seen = sum(batch.size for batch in loader)
    return {"instances": seen, "peak_after_vocab_pass_mib": after_prepare,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "seconds": time.time() - started}


def _single():
    from distrain.distributed.world import SINGLE

    return SINGLE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--max-in-memory", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for lines in args.lines:
            data = Path(folder) / f"data{lines}.jsonl"
            generate(data, lines)
            code = (f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_streaming_memory as b; "
                    f"print(json.dumps(b.measure({str(data)!r}, {args.max_in_memory})))")
            output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            result = json.loads(output.strip().splitlines()[-1])
            print(f"{lines:>9} lines ({data.stat().st_size / 2**20:5.0f} MiB): {result['instances']} instances, "
                  f"peak RSS {result['peak_rss_mib']:.0f} MiB (after the vocabulary pass "
                  f"{result['peak_after_vocab_pass_mib']:.0f} MiB), {result['seconds']:.0f} s")
            data.unlink()


if __name__ == "__main__":
    main()
