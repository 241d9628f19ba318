"""distrain against the real AllenNLP 2.10.1 on the drug reviews, trained from scratch over several seeds.

Three runs per seed, each a ``basic_classifier`` over a bag of 64-wide embeddings, Adam at 0.005, batch 16,
15 epochs with patience 5 on ``+accuracy`` (data: ``python scripts/prepare_data.py --only drug_reviews``):
- ``allennlp``: AllenNLP's ``allennlp train`` on AllenNLP's general form (text_field_embedder + seq2vec_encoder);
- ``distrain_general``: ``distrain train`` on the very same file;
- ``distrain_short``: ``distrain train`` on the same file with the model in distrain's short form (``embedding_dim``
  + ``encoder``, as ``configs/drug_reviews_boe.jsonnet``).
Each run's seeds (random, numpy, pytorch) are the seed. It prints each run's best validation accuracy and wall
time, then per system the mean, the spread (min-max) and the median wall time; the last line says whether each
distrain mean lies inside AllenNLP's own seed spread.

    bash ../shared/allennlp-oracle/setup.sh /tmp/oracle
    .venv/bin/python scripts/compare_allennlp_drug_reviews.py --oracle /tmp/oracle --seeds 1 2 3 4 5
    .venv/bin/python scripts/compare_allennlp_drug_reviews.py --quick   # distrain's two runs only: 1 seed, 1 epoch

``--quick`` needs no oracle: it trains the two distrain forms of the general config for one epoch on one seed
(the data prepared in a temporary folder when ``--data`` has none), a smoke check that distrain still reads
AllenNLP's general form; its last line gives each form's accuracy (no verdict without AllenNLP).
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

from harness import ROOT, environment, example_data


def general_form(data: Path, seed: int) -> dict:
    """The experiment in AllenNLP's general form: runs unchanged under AllenNLP and distrain. Its tokenizer is
    ``just_spaces``, AllenNLP's second name for its ``whitespace`` (split on spaces); both names mean the same in
    both (distrain's punctuation-splitting tokenizer is ``words_and_punctuation``)."""
    return {
        "dataset_reader": {"type": "text_classification_json", "tokenizer": {"type": "just_spaces"},
                           "token_indexers": {"tokens": {"type": "single_id", "lowercase_tokens": True}}},
        "train_data_path": str(data / "train.jsonl"),
        "validation_data_path": str(data / "validation.jsonl"),
        "datasets_for_vocab_creation": ["train"],
        "vocabulary": {"min_count": {"tokens": 2}},
        "model": {"type": "basic_classifier",
                  "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 64}}},
                  "seq2vec_encoder": {"type": "bag_of_embeddings", "embedding_dim": 64, "averaged": True}},
        "data_loader": {"batch_size": 16, "shuffle": True},
        "trainer": {"optimizer": {"type": "adam", "lr": 0.005}, "num_epochs": 15, "validation_metric": "+accuracy",
                    "patience": 5, "cuda_device": -1},
        "random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed,
    }


#: distrain's short form of the same model (the rest of the config as in the general form)
SHORT_MODEL = {"type": "basic_classifier", "embedding_dim": 64, "encoder": {"type": "boe", "averaged": True}}


def run(command: list[str], run_dir: Path, env: dict) -> tuple[float, float]:
    """(best validation accuracy, wall seconds) of one training command writing ``run_dir``."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    return float(metrics["best_validation_accuracy"]), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", help="the AllenNLP venv made by ../shared/allennlp-oracle/setup.sh (required)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--data", default=str(ROOT / "data" / "drug_reviews"))
    parser.add_argument("--quick", action="store_true", help="distrain's two runs only, 1 seed, 1 epoch: a smoke run")
    args = parser.parse_args()
    if not (args.oracle or args.quick):
        parser.error("the following arguments are required: --oracle")
    data = Path(args.data).resolve()
    settings = {"DISTRAIN_CACHE": "off", "DISTRAIN_CURVES": "off", "OMP_NUM_THREADS": "1"}
    env, oracle_env = environment(**settings), {**os.environ, **settings}  # this checkout's distrain; AllenNLP
    distrain = [sys.executable, "-m", "distrain", "train"]
    results: dict[str, list[tuple[float, float]]] = {"allennlp": [], "distrain_general": [], "distrain_short": []}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        if args.quick:
            del results["allennlp"]
            args.seeds = args.seeds[:1]
            if not (data / "train.jsonl").is_file():
                data = example_data(scratch / "examples", "drug_reviews") / "data" / "drug_reviews"
        for seed in args.seeds:
            config = scratch / f"general_{seed}.json"
            settings = general_form(data, seed)
            if args.quick:
                settings["trainer"]["num_epochs"] = 1
            config.write_text(json.dumps(settings))
            if not args.quick:
                out = scratch / f"allennlp_{seed}"
                results["allennlp"].append(run([f"{args.oracle}/bin/allennlp", "train", str(config), "-s", str(out)],
                                               out, oracle_env))
            out = scratch / f"general_{seed}"
            results["distrain_general"].append(run(distrain + [str(config), "-s", str(out)], out, env))
            short = scratch / f"short_{seed}.json"
            short.write_text(json.dumps({**settings, "model": SHORT_MODEL}))
            out = scratch / f"short_{seed}"
            results["distrain_short"].append(run(distrain + [str(short), "-s", str(out)], out, env))
            print(f"seed {seed}: " + ", ".join(f"{name} {runs[-1][0]:.4f} ({runs[-1][1]:.1f} s)"
                                                for name, runs in results.items()), flush=True)
    if args.quick:
        print(" ".join(f"{name}_accuracy={runs[0][0]:.4f}" for name, runs in results.items()))
        return
    low = min(accuracy for accuracy, _ in results["allennlp"])
    high = max(accuracy for accuracy, _ in results["allennlp"])
    verdicts = []
    for name, runs in results.items():
        accuracies = [accuracy for accuracy, _ in runs]
        mean = statistics.mean(accuracies)
        print(f"{name}: mean accuracy {mean:.4f} (min {min(accuracies):.4f}, max {max(accuracies):.4f}), "
              f"median wall time {statistics.median(t for _, t in runs):.1f} s")
        if name != "allennlp":
            verdicts.append(f"{name}_within_allennlp_spread={low <= mean <= high}")
    print(" ".join(verdicts))


if __name__ == "__main__":
    main()
