"""How much mid-epoch checkpointing costs: training time with checkpoints every N batches,
relative to the same run without mid-epoch checkpoints (one process, CPU; ratios within one run).

    python scripts/bench_checkpointing.py [--quick]

``--quick`` (a smoke check): 64 instances (4 steps) at embedding_dim 16, each training once, no untimed
warm-up training, and checkpoints every batch only (no every-100 or every-10 run).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from harness import assemble_run, prepare, text_classifier_config, write_jsonl


def records(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(500)]
    return [{"text": " ".join(rng.choices(words, k=rng.randint(5, 30))), "label": str(rng.randint(0, 4))}
            for _ in range(count)]


def timed_run(folder: Path, train: Path, embedding_dim: int, save_every: int | None, repeats: int = 3) -> float:
    """The fastest of ``repeats`` trainings (the training loop only: data is read beforehand)."""
    config = text_classifier_config(train, embedding_dim, batch_size=16, trainer={  # seeds: the default, 13
        "num_epochs": 1, "progress_bar": False, "save_every_num_batches": save_every})
    prepared = prepare(config)
    best = float("inf")
    for attempt in range(repeats):
        run = folder / f"run{attempt}"
        run.mkdir(parents=True)
        trainer = assemble_run(config, run, prepared).trainer
        started = time.perf_counter()
        trainer.train()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="64 instances (4 steps), each training once, no warm-up "
                        "training, checkpoints every batch only (no every-100 or every-10 run): a smoke check")
    args = parser.parse_args()
    count, dim = (64, 16) if args.quick else (8000, 256)
    repeats = 1 if args.quick else 3
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        train = write_jsonl(tmp / "train.jsonl", records(count, 0))
        if not args.quick:
            timed_run(tmp / "warmup", train, dim, None, repeats=1)
        baseline = timed_run(tmp / "none", train, dim, None, repeats)
        print(f"{count} instances, batch 16, embedding_dim {dim}: {count // 16} steps, no mid-epoch checkpoint: {baseline:.2f} s")
        for every in (1,) if args.quick else (100, 10, 1):
            seconds = timed_run(tmp / f"every_{every}", train, dim, every, repeats)
            print(f"checkpoint every {every:>3} batch(es): {seconds:.2f} s  ratio {seconds / baseline:.2f}")
    print(f"checkpoint_every_batch_ratio={seconds / baseline:.2f}")


if __name__ == "__main__":
    main()
