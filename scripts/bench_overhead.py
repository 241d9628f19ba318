"""Framework overhead: the same model, data, batch size and epochs trained by distrain and by hand.

Both loops train the very same model class (so the compute is identical) on generated text of a fixed
length (so padding is identical) for the same number of epochs. distrain runs its full trainer: global
batch sampler, per-batch collation, metrics, epoch metrics files and checkpoints. The hand-written loop
is what a careful PyTorch user writes: pre-tensorised data, a random permutation per epoch, slicing.
The two alternate for ``--repeats`` rounds and the fastest run of each is compared (the run least
disturbed by other work on a shared machine, as ``timeit`` does).

Prints examples/s of each and, as the last line, ``ratio_vs_handwritten=<distrain/handwritten>``.

    python scripts/bench_overhead.py            # the reported configuration
    python scripts/bench_overhead.py --quick    # a smoke run: 128 examples, 1 epoch, 1 round (after the warm-up)
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from harness import assemble_run, prepare


def make_data(path: Path, count: int, length: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(2000)]
    with open(path, "w") as out:
        for _ in range(count):
            label = rng.randrange(4)
            tokens = [rng.choice(words[label * 500 : (label + 1) * 500]) if rng.random() < 0.3 else rng.choice(words)
                      for _ in range(length)]
            out.write(json.dumps({"text": " ".join(tokens), "label": str(label)}) + "\n")


def config_for(train_path: Path, batch_size: int, epochs: int) -> dict:
    return {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(train_path),
        "model": {
            "type": "basic_classifier",
            "embedding_dim": 128,
            "encoder": {"type": "cnn", "num_filters": 64, "ngram_filter_sizes": [2, 3, 4]},
        },
        "data_loader": {"batch_size": batch_size, "shuffle": True},
        "trainer": {
            "optimizer": {"type": "adam", "lr": 0.001},
            "num_epochs": epochs,
            "progress_bar": False,
            "random_seed": 1,
        },
    }


def run_distrain(config: dict, prepared, out_dir: Path) -> float:
    """Seconds spent in ``trainer.train()`` (the loop, metrics, checkpoints and metric files)."""
    trainer = assemble_run(config, out_dir, prepared).trainer
    started = time.perf_counter()
    trainer.train()
    return time.perf_counter() - started


def run_handwritten(config: dict, prepared, batch_size: int, epochs: int, scratch: Path) -> float:
    """The same model (distrain's assembly, seeded alike) trained by a plain loop over pre-tensorised data."""
    model = assemble_run(config, scratch / "handwritten", prepared).model
    from distrain import get_token_ids_from_text_field_tensors

    everything = prepared.train.batch(np.arange(len(prepared.train)))
    tokens, labels = get_token_ids_from_text_field_tensors(everything["tokens"]), everything["label"]
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    generator = torch.Generator().manual_seed(1)
    started = time.perf_counter()
    for _ in range(epochs):
        model.train()
        order = torch.randperm(len(labels), generator=generator)
        loss_sum, seen = 0.0, 0
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            output = model(tokens={"tokens": {"tokens": tokens[index]}}, label=labels[index])
            output["loss"].backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            loss_sum += output["loss"].item() * len(index)
            seen += len(index)
        model.get_metrics(reset=True)  # the same accuracy bookkeeping the model does in both loops
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=4000)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--quick", action="store_true", help="128 examples, 1 epoch, 1 round (after the warm-up): a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.examples, args.epochs, args.repeats = 128, 1, 1
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        make_data(scratch / "train.jsonl", args.examples, args.length)
        config = config_for(scratch / "train.jsonl", args.batch_size, args.epochs)
        prepared = prepare(config)
        run_handwritten(config, prepared, args.batch_size, 1, scratch)  # warm-up: allocator, kernels
        distrain_times, handwritten_times = [], []
        for repeat in range(args.repeats):
            handwritten_times.append(run_handwritten(config, prepared, args.batch_size, args.epochs, scratch))
            distrain_times.append(run_distrain(config, prepared, scratch / f"run{repeat}"))
    examples = args.examples * args.epochs
    distrain_speed = examples / min(distrain_times)
    handwritten_speed = examples / min(handwritten_times)
    print(f"threads={torch.get_num_threads()} examples={args.examples} length={args.length} "
          f"batch={args.batch_size} epochs={args.epochs} repeats={args.repeats}")
    print(f"handwritten examples/s: {handwritten_speed:.1f} (runs: {', '.join(f'{t:.2f}s' for t in handwritten_times)})")
    print(f"distrain    examples/s: {distrain_speed:.1f} (runs: {', '.join(f'{t:.2f}s' for t in distrain_times)})")
    print(f"ratio_vs_handwritten={distrain_speed / handwritten_speed:.3f}")


if __name__ == "__main__":
    main()
