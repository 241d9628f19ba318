"""AllenNLP's own configs, copied in tests/allennlp_configs/ with their sources named, pass ``distrain check``
and train an epoch on small data in their own formats: the guide's classifier (its reader and model
written against :mod:`distrain.allennlp`, tests/plugins/my_text_classifier), AllenNLP's basic-classifier
fixture and allennlp-models' SST config with a local GloVe file. A stated size that contradicts the
inferred one is one line with its key path and both sizes, before any data is read.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from distrain.config.loading import load_config

CONFIGS = Path(__file__).resolve().parent / "allennlp_configs"
POSITIVE = "great fun moving superb charming".split()
NEGATIVE = "dull boring awful mess tedious".split()
FILLER = "the movie was a film plot and".split()


def without_part_b_keys(config: dict) -> dict:
    """The keys issue 29's part B builds (bucket batches, trainer.cuda_device/grad_norm, the optimizer's string
    form, huggingface_adamw, test_data_path, datasets_for_vocab_creation), replaced by their plain
    equivalents until it lands."""
    config = json.loads(json.dumps(config))
    sampler = config.get("data_loader", {}).pop("batch_sampler", None)
    if sampler is not None:
        config["data_loader"]["batch_size"] = sampler["batch_size"]
    for key in ("grad_norm", "cuda_device"):
        config["trainer"].pop(key, None)
    if isinstance(config["trainer"].get("optimizer"), str):
        config["trainer"]["optimizer"] = {"type": config["trainer"]["optimizer"]}
    if config["trainer"]["optimizer"]["type"] == "huggingface_adamw":
        config["trainer"]["optimizer"]["type"] = "adamw"
        config["trainer"]["optimizer"].pop("correct_bias", None)
    config.pop("test_data_path", None)
    config.pop("datasets_for_vocab_creation", None)
    return config


def sentences(count: int, seed: int) -> list[tuple[list[str], str]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        label = rng.choice(["pos", "neg"])
        words = rng.choices(FILLER, k=4) + rng.choices(POSITIVE if label == "pos" else NEGATIVE, k=2)
        rng.shuffle(words)
        rows.append((words, label))
    return rows


def write_json(path: Path, config: dict) -> Path:
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """Each config's data in its own format, at the relative paths the configs name."""
    root = tmp_path_factory.mktemp("allennlp")
    reviews = root / "data" / "movie_review"
    reviews.mkdir(parents=True)
    for name, seed in (("train", 1), ("dev", 2)):
        (reviews / f"{name}.tsv").write_text("".join(f"{' '.join(w)}\t{y}\n" for w, y in sentences(24, seed)))
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
    for name in ("my_text_classifier.jsonnet", "common.jsonnet", "experiment_seq2vec.jsonnet",
                 "basic_stanford_sentiment_treebank.jsonnet", "stanford_sentiment_treebank_roberta.jsonnet"):
        shutil.copy(CONFIGS / name, root / name)
    return root


def test_guide_text_classifier_passes_check_and_trains_an_epoch(workdir):
    config = without_part_b_keys(load_config(workdir / "my_text_classifier.jsonnet"))
    path = write_json(workdir / "guide.json", config)
    checked = run_cli("check", str(path), "--include-package", "my_text_classifier", cwd=workdir)
    assert checked.returncode == 0, checked.stderr
    trained = run_cli("train", str(path), "--include-package", "my_text_classifier", "-s", "runs/guide", "-f",
                      "-o", '{"trainer.num_epochs": 1}', cwd=workdir)
    assert trained.returncode == 0, trained.stderr
    metrics = json.loads((workdir / "runs" / "guide" / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and 0 <= metrics["validation_accuracy"] <= 1
    assert (workdir / "runs" / "guide" / "model.tar.gz").exists()


def seq2vec_config(workdir: Path) -> dict:
    config = without_part_b_keys(load_config(workdir / "experiment_seq2vec.jsonnet"))
    # spaCy's tokenizer needs the spacy package and an English model, neither of which is installed here
    config["dataset_reader"]["tokenizer"] = {"type": "whitespace"}
    return config


def test_allennlp_basic_classifier_fixture_trains_an_epoch(workdir):
    config = seq2vec_config(workdir)
    path = write_json(workdir / "seq2vec.json", config)
    trained = run_cli("train", str(path), "-s", "runs/seq2vec", "-f", "-o", '{"trainer.num_epochs": 1}', cwd=workdir)
    assert trained.returncode == 0, trained.stderr
    metrics = json.loads((workdir / "runs" / "seq2vec" / "metrics.json").read_text())
    assert "validation_accuracy" in metrics


def test_sst_config_with_local_glove_trains_an_epoch(workdir):
    config = without_part_b_keys(load_config(workdir / "basic_stanford_sentiment_treebank.jsonnet"))
    path = write_json(workdir / "sst.json", config)
    trained = run_cli("train", str(path), "-s", "runs/sst", "-f", "-o", '{"trainer.num_epochs": 1}', cwd=workdir)
    assert trained.returncode == 0, trained.stderr
    log = (workdir / "runs" / "sst" / "out_worker0.log").read_text()
    found, total = map(int, re.search(r"pretrained vectors for (\d+) of (\d+) 'tokens' tokens", log).groups())
    assert found == total - 2  # every word the vectors file has; padding and OOV are not words
    assert json.loads((workdir / "runs" / "sst" / "metrics.json").read_text())["epoch"] == 0


def test_sst_roberta_config_on_local_minilm_trains_an_epoch(workdir):
    config = without_part_b_keys(load_config(workdir / "stanford_sentiment_treebank_roberta.jsonnet"))
    path = write_json(workdir / "roberta.json", config)
    trained = run_cli("train", str(path), "-s", "runs/roberta", "-f", "-o", '{"trainer.num_epochs": 1}', cwd=workdir)
    assert trained.returncode == 0, trained.stderr
    assert json.loads((workdir / "runs" / "roberta" / "metrics.json").read_text())["epoch"] == 0


def test_a_wrong_explicit_input_size_is_one_line_naming_both_sizes_before_data_is_read(workdir):
    config = seq2vec_config(workdir)
    config["model"]["seq2vec_encoder"]["embedding_dim"] = 12
    config["train_data_path"] = config["validation_data_path"] = "no/such/file.jsonl"
    result = run_cli("check", str(write_json(workdir / "wrong.json", config)), cwd=workdir)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["error: model.seq2vec_encoder.embedding_dim: is 12, but the text_field_embedder gives 10"], result.stderr
