"""The AllenNLP tutorial's project as its reader lays it out: a folder holding distrain's own
``tsv_text_classifier`` package (written against :mod:`distrain.allennlp`) is trained with
``--include-package tsv_text_classifier`` (nothing else puts it on ``sys.path``, on two CPU workers), and the
model's default predictor, ``TextLabelPredictor``, predicts from the archive what ``distrain predict`` does.
The base ``Predictor`` reads a distrain reader's JSON records; ``sanitize`` is AllenNLP's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
import torch

from support.allennlp import sentences
from support.cli import run_cli
from support.configs import text_config, write_config
from support.paths import PLUGINS, ROOT
from distrain.allennlp import Predictor, Token, load_archive, sanitize
from distrain.registry import RegistryError

PREDICT = """
import json
import tsv_text_classifier  # from the script's own folder: the project, as the tutorial's predict.py
from distrain.allennlp import Predictor

predictor = Predictor.from_path("model/model.tar.gz")  # no name: the model's default_predictor
vocab = predictor._model.vocab
texts = [line.rstrip("\\n").split("\\t")[1] for line in open("data/reviews_tsv/test.tsv")]
outputs = [predictor.predict(text) for text in texts]
print(json.dumps({"type": type(predictor).__name__, "outputs": outputs,
                  "batch": predictor.predict_batch_json([{"text": text} for text in texts]),
                  "labels": [vocab.get_token_from_index(i, "labels") for i in range(vocab.get_vocab_size("labels"))]}))
"""


def project_environment() -> dict:
    """distrain's sources importable, and nothing that leads to the tests' plugin folder."""
    return dict(os.environ, PYTHONPATH=str(ROOT / "src"), HF_HUB_OFFLINE="1")


def distrain(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI as the ``distrain`` console script runs it: the working directory is not on ``sys.path``."""
    return subprocess.run([sys.executable, "-P", "-m", "distrain", *args], cwd=cwd, env=project_environment(),
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The tutorial's project folder: the package, its config as it is, and reviews at the config's paths
    (label first; capitalised, so the reader's lowercasing is what makes the test words known)."""
    root = tmp_path_factory.mktemp("tsv_project")
    shutil.copytree(PLUGINS / "tsv_text_classifier", root / "tsv_text_classifier",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PLUGINS / "tsv_text_classifier.jsonnet", root)
    reviews = root / "data" / "reviews_tsv"
    reviews.mkdir(parents=True)
    for name, count, seed in (("train", 160, 11), ("validation", 40, 12), ("test", 12, 13)):
        (reviews / f"{name}.tsv").write_text(
            "".join(f"{y}\t{' '.join(w).upper() if name == 'test' else ' '.join(w)}\n"
                    for w, y in sentences(count, seed)))
    return root


def test_tsv_package_trains_from_its_folder_and_its_predictor_predicts_what_distrain_predict_does(project):
    trained = distrain("train", "tsv_text_classifier.jsonnet", "-s", "model", "--include-package",
                       "tsv_text_classifier", "-o", '{"distributed": {"cuda_devices": [-1, -1]}}', cwd=project)
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert (project / "model" / "out_worker1.log").exists()
    predicted = distrain("predict", "model/model.tar.gz", "data/reviews_tsv/test.tsv", "--output-file",
                         "predictions.jsonl", "--include-package", "tsv_text_classifier", cwd=project)
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    (project / "predict.py").write_text(PREDICT)
    script = subprocess.run([sys.executable, "predict.py"], cwd=project, env=project_environment(),
                            capture_output=True, text=True, timeout=300)
    assert script.returncode == 0, script.stderr[-3000:]
    result = json.loads(script.stdout)
    assert result["type"] == "TextLabelPredictor" and sorted(result["labels"]) == ["neg", "pos"]
    expected = [json.loads(line) for line in (project / "predictions.jsonl").read_text().splitlines()]
    assert len(result["outputs"]) == len(expected) == 12
    for output, batched, written in zip(result["outputs"], result["batch"], expected):
        assert list(written) == ["probs", "label", "probability"]
        assert written["probability"] == max(written["probs"])
        assert written["label"] == result["labels"][written["probs"].index(written["probability"])]
        assert list(output) == ["label", "probability"] and output["label"] == written["label"]
        assert output["probability"] == pytest.approx(written["probability"], abs=1e-6)
        assert batched["label"] == written["label"] and batched["probs"] == pytest.approx(written["probs"], abs=1e-6)
    # trained on lowercase reviews whose label words decide: the upper-case test reviews are classified
    gold = [line.split("\t", 1)[0] for line in (project / "data/reviews_tsv/test.tsv").read_text().splitlines()]
    assert sum(output["label"] == y for output, y in zip(result["outputs"], gold)) >= 10


def test_the_tsv_reader_takes_the_columns_it_is_given_lowercases_and_names_a_short_row(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGINS))
    from tsv_text_classifier import LabelledTextTsvReader

    path = tmp_path / "rows.tsv"
    path.write_text("7\tpos\tGreat Fun\n\n8\tneg\tDull\n")
    reader = LabelledTextTsvReader(text_column=2, label_column=1, lowercase=True)
    read = [(instance["words"], instance["label"]) for instance in reader._read(str(path))]
    assert [([token.text for token in words.tokens], label.label) for words, label in read] == [
        (["great", "fun"], "pos"), (["dull"], "neg")]
    assert set(reader.text_to_instance("Unlabelled text")) == {"words"}
    path.write_text("pos\tgood\nneg\n")
    short = f"{path}:2: only 1 tab-separated column(s), for text_column 0 and label_column 1"
    with pytest.raises(ValueError, match=re.escape(short)):
        list(LabelledTextTsvReader(label_column=1)._read(str(path)))


@pytest.fixture(scope="module")
def classifier_archive(tmp_path_factory, text_data_module) -> str:
    folder = tmp_path_factory.mktemp("classifier")
    config = write_config(folder / "config.json", text_config(text_data_module, num_epochs=1))
    trained = run_cli("train", str(config), "-s", str(folder / "run"))
    assert trained.returncode == 0, trained.stderr[-3000:]
    return str(folder / "run" / "model.tar.gz")


@pytest.fixture(scope="module")
def text_data_module(tmp_path_factory) -> dict[str, Path]:
    from support.data import sentiment_records, write_jsonl

    folder = tmp_path_factory.mktemp("text")
    return {"train": write_jsonl(folder / "train.jsonl", sentiment_records(60, seed=1)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(20, seed=2))}


def test_the_base_predictor_reads_a_distrain_readers_json_records(classifier_archive):
    archive = load_archive(classifier_archive)
    predictor = Predictor(archive.model, archive.validation_dataset_reader)
    single = predictor.predict_json({"text": "good great love"})
    # AllenNLP's basic classifier answers its forward pass made readable: label and tokens beside the tensors
    assert set(single) == {"label", "logits", "probs", "token_ids", "tokens"} and single["label"] in ("pos", "neg")
    assert single["tokens"] == ["good", "great", "love"] and len(single["token_ids"]) == 3
    batch = predictor.predict_batch_json([{"text": "good great love"}, {"text": "bad awful", "label": "neg"}])
    assert batch[0] == single and len(batch) == 2
    assert predictor.dump_line(single) == json.dumps(single) + "\n" and predictor.load_line('{"text": "a"}') == {
        "text": "a"}
    counted = predictor._model.metrics["accuracy"].state()
    assert float(counted.get("total", 0.0)) == 0.0  # the labelled input counted towards no metric


def test_archives_load_as_allennlps_and_an_unknown_predictor_name_says_which_exist(classifier_archive):
    archive = load_archive(classifier_archive, overrides='{"dataset_reader.text_key": "review"}')
    assert not archive.model.training and archive.config["model"]["type"] == "basic_classifier"
    assert archive.validation_dataset_reader.text_key == "review"
    predictor = Predictor.from_archive(archive, dataset_reader_to_load="train")  # the model's default: AllenNLP's
    assert type(predictor).__name__ == "TextClassifierPredictor"
    assert predictor.predict_json({"sentence": "good"})["label"] in ("pos", "neg")
    assert Predictor(archive.model, archive.dataset_reader).predict_json({"review": "good"})["label"] in ("pos", "neg")
    with pytest.raises(RegistryError, match='unknown Predictor type "sentence_clasifier"'):
        Predictor.from_archive(archive, "sentence_clasifier")


# AllenNLP's sanitize of the same value, printed by `/work/oracle/bin/python tests/allennlp_oracle/sanitize_outputs.py`
SANITIZED = {'tensor': [[1.5, 2.0]], 'array': [0, 1, 2], 'float32': 0.5, 'int64': 7, 'bool_': True,
             'tuple': [1, 'x', 'None'], 'set': [2], 'tokens': ['token', 'words'], 'object': {'from': 'to_json'},
             'bool': False}


class Jsonable:
    def to_json(self):
        return {"from": "to_json"}


def test_sanitize_is_allennlps():
    words = spacy.blank("en")("spaCy words")
    value = {"tensor": torch.tensor([[1.5, 2.0]]), "array": numpy.arange(3), "float32": numpy.float32(0.5),
             "int64": numpy.int64(7), "bool_": numpy.bool_(True), "tuple": (1, "x", None), "set": {2},
             "tokens": [Token("token"), words[1]], "object": Jsonable(), "bool": False}
    sanitized = sanitize(value)
    assert sanitized == SANITIZED and json.loads(json.dumps(sanitized)) == SANITIZED
    with pytest.raises(ValueError, match="cannot sanitize <object object"):
        sanitize(object())
