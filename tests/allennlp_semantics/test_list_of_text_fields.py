"""A ``ListField`` of ``TextField``s (a question's answer choices), each indexed by words and characters, batched to
``(batch, choices, length[, characters])`` and embedded by ``BasicTextFieldEmbedder`` with ``num_wrapping_dims=1``
to ``(batch, choices, length, dim)``, as AllenNLP does: a user's multiple-choice model trains through the CLI."""

from __future__ import annotations

import json
import random

import torch

from distrain.modules.text_field_embedder import BasicTextFieldEmbedder, get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding
from support.cli import run_cli
from support.configs import write_config

PLUGIN = '''
import torch
from allennlp.data import DatasetReader, Instance
from allennlp.nn.util import get_text_field_mask
from distrain.allennlp import (LabelField, Model, SingleIdTokenIndexer, TextField, TextFieldEmbedder, Token,
                               TokenCharactersIndexer)
from distrain.data.fields import ListField

SHAPES = []


@DatasetReader.register("user_choices")
class ChoicesReader(DatasetReader):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.indexers = {"tokens": SingleIdTokenIndexer(), "token_characters": TokenCharactersIndexer()}

    def _read(self, file_path):
        with open(file_path) as lines:
            for line in lines:
                *choices, answer = line.rstrip("\\n").split("\\t")
                yield self.text_to_instance(choices, int(answer))

    def text_to_instance(self, choices, answer=None):
        fields = {"choices": ListField([TextField([Token(w) for w in choice.split()], self.indexers)
                                        for choice in choices])}
        if answer is not None:
            fields["answer"] = LabelField(answer, skip_indexing=True)
        return Instance(fields=fields)


@Model.register("user_chooser")
class Chooser(Model):
    def __init__(self, vocab, text_field_embedder: TextFieldEmbedder) -> None:
        super().__init__(vocab)
        self.embedder = text_field_embedder
        self.score = torch.nn.Linear(text_field_embedder.get_output_dim(), 1)

    def forward(self, choices, answer=None):
        embedded = self.embedder(choices, num_wrapping_dims=1)
        mask = get_text_field_mask(choices, num_wrapping_dims=1)
        if embedded.shape[:3] != mask.shape or embedded.shape[-1] != self.embedder.get_output_dim():
            raise ValueError(f"embedded {tuple(embedded.shape)} for a mask of {tuple(mask.shape)}")
        pooled = (embedded * mask.unsqueeze(-1)).sum(2) / mask.sum(2, keepdim=True).clamp(min=1)
        logits = self.score(pooled).squeeze(-1).masked_fill(~mask.any(-1), -1e4)
        output = {"logits": logits}
        if answer is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, answer)
        return output
'''


def questions(count: int, seed: int) -> str:
    """Two to four choices of differing lengths; the answer is the one holding "yes"."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        choices = [" ".join(rng.choices(["no", "maybe", "never", "so"], k=rng.randint(1, 5)))
                   for _ in range(rng.randint(2, 4))]
        answer = rng.randrange(len(choices))
        choices[answer] += " yes"
        lines.append("\t".join(choices) + f"\t{answer}\n")
    return "".join(lines)


def test_num_wrapping_dims_folds_the_list_dimension_for_each_embedder():
    embedder = BasicTextFieldEmbedder({"tokens": Embedding(embedding_dim=5, num_embeddings=10)})
    ids = torch.tensor([[[1, 2, 0], [3, 0, 0]], [[4, 5, 6], [0, 0, 0]]])
    assert embedder({"tokens": {"tokens": ids}}, num_wrapping_dims=1).shape == (2, 2, 3, 5)
    assert get_text_field_mask({"tokens": {"tokens": ids}}, num_wrapping_dims=1).tolist() == (ids != 0).tolist()


def test_a_list_of_text_fields_with_characters_trains_through_the_cli(tmp_path):
    (tmp_path / "user_choices.py").write_text(PLUGIN)
    (tmp_path / "train.tsv").write_text(questions(32, 1))
    (tmp_path / "validation.tsv").write_text(questions(8, 2))
    config = {
        "dataset_reader": {"type": "user_choices"}, "train_data_path": "train.tsv",
        "validation_data_path": "validation.tsv",
        "model": {"type": "user_chooser", "text_field_embedder": {"token_embedders": {
            "tokens": {"type": "embedding", "embedding_dim": 6},
            "token_characters": {"type": "character_encoding", "embedding": {
                                 "embedding_dim": 3, "vocab_namespace": "token_characters"},
                                 "encoder": {"type": "cnn", "embedding_dim": 3, "num_filters": 4,
                                             "ngram_filter_sizes": [1, 2]}}}}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 4, "optimizer": {"type": "adam", "lr": 0.05}, "progress_bar": False},
    }
    path = write_config(tmp_path / "config.json", config)
    trained = run_cli("train", str(path), "-s", "run", "--include-package", "user_choices", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["validation_loss"] < 0.5, metrics  # chance is at least ln 2 (two choices or more)
