"""Text classifier: embed tokens → encode to a vector → optional feed-forward → label logits."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.models.classification import ClassifierOutputs
from distrain.models.model import Model
from distrain.config.lazy import Lazy
from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2vec import Seq2VecEncoder


@Model.register("basic_classifier")
class BasicClassifier(ClassifierOutputs, Model):
    """Embed tokens, encode them to one vector, optional feed-forward, then label logits."""

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: Lazy[Seq2VecEncoder],
        embedding_dim: PositiveInt = 100,
        feedforward: Lazy[FeedForward] | None = None,
        dropout: Probability = 0.0,
        namespace: str = "tokens",
        label_namespace: str = "labels",
        metrics: dict[str, Metric] | None = None,
    ) -> None:
        super().__init__(vocab, metrics if metrics is not None else {"accuracy": CategoricalAccuracy()})
        self.label_namespace = label_namespace
        self.use_label_names(label_namespace)
        self.embedding = torch.nn.Embedding(vocab.size(namespace), embedding_dim, padding_idx=0)
        self.encoder = encoder.construct(input_dim=embedding_dim)
        width = self.encoder.output_dim
        self.feedforward = feedforward.construct(input_dim=width) if feedforward else None
        width = self.feedforward.output_dim if self.feedforward else width
        self.dropout = torch.nn.Dropout(dropout) if dropout > 0 else torch.nn.Identity()
        self.output = torch.nn.Linear(width, vocab.size(label_namespace))

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        encoder, width = arguments["encoder"], arguments["embedding_dim"]
        problem = encoder.cls.input_dim_problem(encoder, width) if isinstance(encoder, Lazy) else None
        return [Problem("embedding_dim", f"{problem}, got {width}")] if problem else []

    def forward(self, tokens: torch.Tensor, label: torch.Tensor | None = None, **_: Any) -> dict[str, torch.Tensor]:
        mask = tokens.ne(0)
        encoded = self.encoder(self.embedding(tokens), mask)
        if self.feedforward is not None:
            encoded = self.feedforward(encoded)
        logits = self.output(self.dropout(encoded))
        return self.classify(logits, label)
