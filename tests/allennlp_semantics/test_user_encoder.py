"""A user's seq2vec encoder inside ``basic_classifier``, written against AllenNLP's base class: it calls
``super().__init__(stateful=False)``, takes ``**kwargs`` (and must not find the model's ``input_dim`` there, nor
any key but those its block gives), and states its width through ``get_output_dim()`` only, with no
``output_dim`` attribute. Trained through the CLI."""

from __future__ import annotations

import json

from support.allennlp import assert_evaluate_gives
from support.cli import run_cli
from support.configs import write_config
from support.data import sentiment_records, write_jsonl

ENCODER = '''
import json
from pathlib import Path

import torch
from distrain.allennlp import Seq2VecEncoder  # allennlp.modules.Seq2VecEncoder, once served there


@Seq2VecEncoder.register("user_mean_encoder")
class MeanEncoder(Seq2VecEncoder):
    def __init__(self, embedding_dim: int, scale: float = 1.0, **kwargs) -> None:
        note = kwargs.pop("note", None)
        super().__init__(stateful=False)
        Path("received.json").write_text(json.dumps({"kwargs": sorted(kwargs), "note": note,
                                                     "stateful": self.stateful}))
        self._dim, self.scale = embedding_dim, scale
        self.projection = torch.nn.Linear(embedding_dim, embedding_dim)

    def get_input_dim(self) -> int:
        return self._dim

    def get_output_dim(self) -> int:
        return self._dim

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        summed = (self.projection(tokens) * mask.unsqueeze(-1)).sum(1)
        return self.scale * summed / mask.sum(1, keepdim=True).clamp(min=1)
'''


def test_a_user_encoder_with_kwargs_trains_in_basic_classifier(tmp_path):
    (tmp_path / "user_encoder.py").write_text(ENCODER)
    config = {
        "dataset_reader": {"type": "text_classification_json", "tokenizer": {"type": "whitespace"},
                           "token_indexers": {"tokens": {"type": "single_id"}}},
        "train_data_path": str(write_jsonl(tmp_path / "train.jsonl", sentiment_records(24, 1))),
        "validation_data_path": str(write_jsonl(tmp_path / "validation.jsonl", sentiment_records(8, 2))),
        "model": {"type": "basic_classifier",
                  "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}},
                  "seq2vec_encoder": {"type": "user_mean_encoder", "embedding_dim": 6, "scale": 2.0,
                                      "note": "passed on"}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False},
    }
    path = write_config(tmp_path / "config.json", config)
    trained = run_cli("train", str(path), "-s", "run", "--include-package", "user_encoder", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert json.loads((tmp_path / "received.json").read_text()) == {"kwargs": [], "note": "passed on",
                                                                    "stateful": False}
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert 0 <= metrics["validation_accuracy"] <= 1
    assert_evaluate_gives(tmp_path / "run", config["validation_data_path"], "validation_accuracy",
                          metrics["validation_accuracy"], tmp_path, "--include-package", "user_encoder")
