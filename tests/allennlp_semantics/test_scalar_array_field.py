"""A scalar regression in AllenNLP's idiom: a reader building ``Instance(fields={...})`` with a 0-d
``ArrayField(score, padding_value=...)`` target, and a model that regresses it. It trains through the CLI (the
dataset writer and the shared cache included: the second run reads the cached entry), and evaluates."""

from __future__ import annotations

import json
import random

import numpy as np

from distrain.data.fields import ArrayField, Instance, LabelField
from support.cli import run_cli
from support.configs import write_config

PLUGIN = '''
import numpy as np
import torch
from allennlp.data import DatasetReader, Instance
from distrain.allennlp import ArrayField, Model, SingleIdTokenIndexer, TextField, Token


@DatasetReader.register("user_scores")
class ScoreReader(DatasetReader):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.indexers = {"tokens": SingleIdTokenIndexer()}

    def _read(self, file_path):
        with open(file_path) as lines:
            for line in lines:
                text, score = line.rstrip("\\n").split("\\t")
                yield self.text_to_instance(text, float(score))

    def text_to_instance(self, text, score=None):
        fields = {"tokens": TextField([Token(word) for word in text.split()], self.indexers)}
        if score is not None:
            fields["target"] = ArrayField(np.array(score, dtype=np.float32), padding_value=-1.0)
        return Instance(fields=fields)


@Model.register("user_regressor")
class Regressor(Model):
    def __init__(self, vocab, embedding_dim: int = 8) -> None:
        super().__init__(vocab)
        self.embedding = torch.nn.Embedding(vocab.get_vocab_size("tokens"), embedding_dim, padding_idx=0)
        self.output = torch.nn.Linear(embedding_dim, 1)

    def forward(self, tokens, target=None):
        ids = tokens["tokens"]["tokens"]
        mask = (ids != 0).float()
        pooled = (self.embedding(ids) * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        prediction = self.output(pooled).squeeze(-1)
        output = {"prediction": prediction}
        if target is not None:
            if target.shape != prediction.shape:
                raise ValueError(f"target {tuple(target.shape)} for predictions {tuple(prediction.shape)}")
            output["loss"] = torch.nn.functional.mse_loss(prediction, target)
        return output
'''


def scores(count: int, seed: int) -> str:
    """Texts whose score is the share of "good" among their words."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        words = rng.choices(["good", "bad", "the", "film"], k=rng.randint(2, 7))
        lines.append(f"{' '.join(words)}\t{words.count('good') / len(words):.4f}\n")
    return "".join(lines)


def test_instance_takes_allennlps_fields_keyword():
    label = LabelField("pos")
    assert dict(Instance(fields={"label": label})) == {"label": label}
    assert list(Instance({"fields": label})) == ["fields"]  # a field called "fields" still goes in a dict


def test_array_field_takes_allennlps_padding_value_and_keeps_pad_value():
    assert ArrayField(np.zeros(3), padding_value=-1).pad_value == -1
    assert ArrayField(np.zeros(3), pad_value=-2).padding_value == -2
    assert ArrayField(np.array(0.5, dtype=np.float32)).array.shape == ()


def test_a_scalar_array_field_regression_trains_from_the_cache_and_evaluates(tmp_path):
    (tmp_path / "user_regression.py").write_text(PLUGIN)
    (tmp_path / "train.tsv").write_text(scores(40, 1))
    (tmp_path / "validation.tsv").write_text(scores(12, 2))
    config = {"dataset_reader": {"type": "user_scores"}, "train_data_path": "train.tsv",
              "validation_data_path": "validation.tsv", "model": {"type": "user_regressor"},
              "data_loader": {"batch_size": 8},
              "trainer": {"num_epochs": 3, "optimizer": {"type": "adam", "lr": 0.05}, "progress_bar": False}}
    path = write_config(tmp_path / "config.json", config)
    environment = {"DISTRAIN_CACHE": str(tmp_path / "cache")}
    for run in ("first", "cached"):
        trained = run_cli("train", str(path), "-s", run, "--include-package", "user_regression", cwd=tmp_path,
                          env=environment)
        assert trained.returncode == 0, trained.stderr
    assert len([entry for entry in (tmp_path / "cache").iterdir() if not entry.name.startswith(".")]) == 1
    first, cached = (json.loads((tmp_path / run / "metrics.json").read_text()) for run in ("first", "cached"))
    assert cached["validation_loss"] == first["validation_loss"] < 0.2
    evaluated = run_cli("evaluate", "first/model.tar.gz", "validation.tsv", "--output-file", "scores.json",
                        "--include-package", "user_regression", cwd=tmp_path, env=environment)
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads((tmp_path / "scores.json").read_text())["loss"] == first["validation_loss"]
