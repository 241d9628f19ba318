"""How much mid-epoch checkpointing costs: training time with checkpoints every N batches,
relative to the same run without mid-epoch checkpoints (one process, CPU; ratios within one run).

    python scripts/bench_checkpointing.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path


def records(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(500)]
    return [{"text": " ".join(rng.choices(words, k=rng.randint(5, 30))), "label": str(rng.randint(0, 4))}
            for _ in range(count)]


def timed_run(folder: Path, train: Path, embedding_dim: int, save_every: int | None, repeats: int = 3) -> float:
    """The fastest of ``repeats`` trainings (the training loop only: data is read beforehand)."""
    from distrain.data.loader import DataLoader
    from distrain.experiment.prepare import DataPlan, prepare_data
    from distrain.experiment.plan import resolve_experiment
    from distrain.experiment.assemble import set_seed

    config = {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(train),
        "model": {"type": "basic_classifier", "embedding_dim": embedding_dim, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 16},
        "trainer": {"num_epochs": 1, "progress_bar": False, "save_every_num_batches": save_every},
    }
    experiment = resolve_experiment(config).build()
    prepared = prepare_data(DataPlan.of(experiment))
    best = float("inf")
    for attempt in range(repeats):
        set_seed(13)
        run = folder / f"run{attempt}"
        run.mkdir(parents=True)
        trainer = experiment.trainer.construct(
            model=experiment.model.construct(vocab=prepared.vocab),
            train_loader=DataLoader(prepared.train, experiment.data_loader, seed=13),
            validation_loader=None, serialization_dir=run,
        )
        started = time.perf_counter()
        trainer.train()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small run, for a smoke check")
    args = parser.parse_args()
    from distrain.plugins import import_builtins

    import_builtins()
    count, dim = (800, 64) if args.quick else (8000, 256)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        train = tmp / "train.jsonl"
        train.write_text("".join(json.dumps(r) + "\n" for r in records(count, 0)))
        timed_run(tmp / "warmup", train, dim, None, repeats=1)
        baseline = timed_run(tmp / "none", train, dim, None)
        print(f"{count} instances, batch 16, embedding_dim {dim}: {count // 16} steps, no mid-epoch checkpoint: {baseline:.2f} s")
        for every in (100, 10, 1):
            seconds = timed_run(tmp / f"every_{every}", train, dim, every)
            print(f"checkpoint every {every:>3} batch(es): {seconds:.2f} s  ratio {seconds / baseline:.2f}")


if __name__ == "__main__":
    main()
