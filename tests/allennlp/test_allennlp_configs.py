"""Configs in AllenNLP's format pass ``distrain check`` and train an epoch on small data in their own formats:
distrain's own TSV classifier of the AllenNLP tutorial (a reader, model and predictor written against
:mod:`distrain.allennlp`, tests/plugins/tsv_text_classifier, with its config beside it), and AllenNLP's own
configs: AllenNLP's basic-classifier fixture as it is (read where tests/support/allennlp_fixtures.py finds it) and
allennlp-models' SST config (tests/allennlp_configs/, its source named) with a local GloVe file. A stated size that contradicts the inferred one is one
line with its key path and both sizes, before any data is read.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from support.allennlp import (CONFIGS, FILLER, NEGATIVE, POSITIVE, assert_evaluate_gives, check_and_train_an_epoch,
                              sentences)
from support.allennlp_fixtures import ALLENNLP, available, needs_fixtures
from support.cli import run_cli
from support.distributed import final_metrics, max_weight_difference
from support.paths import PLUGINS
from distrain.config.loading import load_config

def write_json(path: Path, config: dict) -> Path:
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """Each config's data in its own format, at the relative paths the configs name."""
    root = tmp_path_factory.mktemp("allennlp")
    reviews = root / "data" / "reviews_tsv"
    reviews.mkdir(parents=True)
    for name, seed in (("train", 1), ("validation", 2)):  # label first, as the config's columns say
        (reviews / f"{name}.tsv").write_text("".join(f"{y}\t{' '.join(w)}\n" for w, y in sentences(32, seed)))
    imdb = root / "test_fixtures" / "data" / "text_classification_json"
    imdb.mkdir(parents=True)
    (imdb / "imdb_corpus.jsonl").write_text("".join(
        json.dumps({"text": " ".join(w).capitalize() + ".", "label": y}) + "\n" for w, y in sentences(20, 3)))
    sst = root / "sst"
    sst.mkdir()
    for name, seed in (("train", 4), ("dev", 5), ("test", 6)):
        lines = []
        for words, label in sentences(12, seed):
            top = "4" if label == "pos" else "0"
            lines.append(f"({top} (2 {words[0]}) ({top} " + " ".join(f"(2 {w})" for w in words[1:]) + "))\n")
        (sst / f"{name}.txt").write_text("".join(lines))
    vocabulary = POSITIVE + NEGATIVE + FILLER
    with gzip.open(sst / "glove.840B.300d.txt.gz", "wt") as vectors:
        for index, word in enumerate(vocabulary):
            vectors.write(word + "".join(f" {((index * 7 + d) % 11) / 10 - 0.5:.1f}" for d in range(300)) + "\n")
    shutil.copy(PLUGINS / "tsv_text_classifier.jsonnet", root)
    for name in ("basic_stanford_sentiment_treebank.jsonnet", "stanford_sentiment_treebank_roberta.jsonnet"):
        shutil.copy(CONFIGS / name, root / name)
    if available():  # AllenNLP's basic-classifier fixture, as it is (its data: the imdb lines above)
        for name in ("common.jsonnet", "experiment_seq2vec.jsonnet"):
            shutil.copy(ALLENNLP / "test_fixtures" / "basic_classifier" / name, root / name)
    return root


TSV = ("--include-package", "tsv_text_classifier")


def test_tsv_text_classifier_passes_check_and_trains_an_epoch_on_two_cpu_workers(workdir):
    """The tutorial's config as it is, with AllenNLP's distributed block on CPU processes (and the model's
    dropout on: the config leaves it at 0)."""
    config = load_config(workdir / "tsv_text_classifier.jsonnet") | {"distributed": {"cuda_devices": [-1, -1]}}
    path = write_json(workdir / "tsv.json", config)
    checked = run_cli("check", str(path), *TSV, cwd=workdir)
    assert checked.returncode == 0, checked.stderr
    trained = run_cli("train", str(path), *TSV, "-s", "runs/tsv", "-f", "-o",
                      '{"trainer.num_epochs": 1, "model.dropout": 0.2}', cwd=workdir)
    assert trained.returncode == 0, trained.stderr
    metrics = json.loads((workdir / "runs" / "tsv" / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and 0 <= metrics["validation_accuracy"] <= 1
    # the two workers' synced accuracy is one process's over the whole validation file
    assert_evaluate_gives(workdir / "runs" / "tsv", config["validation_data_path"], "validation_accuracy",
                          metrics["validation_accuracy"], workdir, *TSV)
    assert (workdir / "runs" / "tsv" / "model.tar.gz").exists()
    assert (workdir / "runs" / "tsv" / "out_worker1.log").exists()


def test_tsv_text_classifier_with_bucket_batches_ends_alike_on_one_and_two_workers(workdir):
    """AllenNLP's batch size is each worker's: 16 on one worker is the global batch of 8 on each of two.
    Bucket batches (noisy length sort) keep one global order whatever the world size, so the two runs take
    the same steps: weights and metrics within 1e-5 after 2 epochs (dropout stays 0: its masks would differ)."""
    runs = {}
    for workers in (1, 2):
        config = load_config(workdir / "tsv_text_classifier.jsonnet")
        config["data_loader"] = {"batch_sampler": {"type": "bucket", "sorting_keys": ["words"],
                                                   "padding_noise": 0.2, "batch_size": 16 // workers}}
        config["trainer"]["num_epochs"] = 2
        if workers > 1:
            config["distributed"] = {"cuda_devices": [-1] * workers}
        path = write_json(workdir / f"tsv_bucket_{workers}.json", config)
        runs[workers] = workdir / "runs" / f"tsv_bucket_{workers}"
        trained = run_cli("train", str(path), *TSV, "-s", str(runs[workers]), "-f", cwd=workdir)
        assert trained.returncode == 0, trained.stderr
    assert max_weight_difference(runs[1], runs[2]) <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("training_loss", "validation_loss", "validation_accuracy"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key


def test_tsv_config_with_allennlps_boe_and_its_embedding_dim_passes_check_and_a_wrong_dim_is_one_line(workdir):
    """AllenNLP registers ``boe`` as another name of ``bag_of_embeddings`` (``embedding_dim``, ``averaged``);
    the model's ``pooler`` is checked against its ``embedder`` as AllenNLP's ``encoder`` would be."""
    config = load_config(workdir / "tsv_text_classifier.jsonnet")
    config["model"]["pooler"] = {"type": "boe", "embedding_dim": 16}
    checked = run_cli("check", str(write_json(workdir / "tsv_boe.json", config)), *TSV, cwd=workdir)
    assert checked.returncode == 0, checked.stderr
    config["model"]["pooler"]["embedding_dim"] = 12
    config["train_data_path"] = "no/such/file.tsv"  # the sizes are compared before any data is read
    wrong = run_cli("check", str(write_json(workdir / "tsv_boe_wrong.json", config)), *TSV, cwd=workdir)
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == "error: model.pooler.embedding_dim: is 12, but the embedder gives 16"


def seq2vec_config(workdir: Path) -> dict:
    """The fixture as it is: its ``spacy`` tokenizer, without the English model package, tokenizes with
    spaCy's blank English pipeline (the same rules; AllenNLP's default POS tags are not needed)."""
    return load_config(workdir / "experiment_seq2vec.jsonnet")


@needs_fixtures
def test_allennlp_basic_classifier_fixture_passes_check_and_trains_an_epoch(workdir):
    check_and_train_an_epoch(workdir, seq2vec_config(workdir), "seq2vec")


def test_sst_config_with_local_glove_passes_check_and_trains_an_epoch(workdir):
    run = check_and_train_an_epoch(workdir, load_config(workdir / "basic_stanford_sentiment_treebank.jsonnet"), "sst")
    log = (run / "out_worker0.log").read_text()
    found, total = map(int, re.search(r"pretrained vectors for (\d+) of (\d+) 'tokens' tokens", log).groups())
    assert found == total - 2  # every word the vectors file has; padding and OOV are not words


def test_sst_roberta_config_on_local_minilm_passes_check_and_trains_an_epoch(workdir):
    check_and_train_an_epoch(workdir, load_config(workdir / "stanford_sentiment_treebank_roberta.jsonnet"), "roberta")


@needs_fixtures
def test_a_wrong_explicit_input_size_is_one_line_naming_both_sizes_before_data_is_read(workdir):
    config = seq2vec_config(workdir)
    config["model"]["seq2vec_encoder"]["embedding_dim"] = 12
    config["train_data_path"] = config["validation_data_path"] = "no/such/file.jsonl"
    result = run_cli("check", str(write_json(workdir / "wrong.json", config)), cwd=workdir)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["error: model.seq2vec_encoder.embedding_dim: is 12, but the text_field_embedder gives 10"], result.stderr
