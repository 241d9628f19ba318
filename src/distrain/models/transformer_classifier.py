"""Sequence classifier over any pretrained transformer encoder: pool the token vectors, then a linear layer."""

from __future__ import annotations

from typing import Any, Literal

import torch

from distrain.config.constraints import NonNegativeInt, Probability
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.models.classification import ClassifierOutputs
from distrain.models.model import Model
from distrain.modules.pretrained_transformer import PretrainedTransformerEncoder
from distrain.pretrained import PretrainedName


@Model.register("transformer_classifier")
class TransformerClassifier(ClassifierOutputs, Model):
    """``pooling``: ``cls`` takes the first token's vector, ``mean`` averages the unpadded tokens.

    The token field must come from the ``pretrained_transformer`` tokenizer of the same model;
    ``pad_token_id`` marks padding (0 for BERT-style vocabularies)."""

    def __init__(
        self,
        vocab: Vocabulary,
        model_name: PretrainedName,
        pooling: Literal["cls", "mean"] = "cls",
        dropout: Probability = 0.1,
        pad_token_id: NonNegativeInt = 0,
        label_namespace: str = "labels",
        gradient_checkpointing: bool = False,
        metrics: dict[str, Metric] | None = None,
    ) -> None:
        super().__init__(vocab, metrics if metrics is not None else {"accuracy": CategoricalAccuracy()})
        self.label_namespace = label_namespace
        self.pooling = pooling
        self.pad_token_id = pad_token_id
        self.encoder = PretrainedTransformerEncoder(model_name, gradient_checkpointing=gradient_checkpointing)
        self.dropout = torch.nn.Dropout(dropout) if dropout > 0 else torch.nn.Identity()
        self.output = torch.nn.Linear(self.encoder.output_dim, vocab.size(label_namespace))

    def shard_units(self) -> list[str]:
        """The transformer's layers (the embeddings stay with the root, beside what reuses them)."""
        return self.encoder.layer_patterns("encoder")

    def tensor_parallel_plan(self) -> dict[str, str]:
        """The encoder's attention heads and feed-forward units (see the encoder's plan)."""
        return self.encoder.tensor_parallel_plan("encoder")

    def tensor_parallel_sizes(self) -> dict[str, int]:
        return self.encoder.tensor_parallel_sizes()

    def forward(self, tokens: torch.Tensor, label: torch.Tensor | None = None, **_: Any) -> dict[str, torch.Tensor]:
        mask = tokens.ne(self.pad_token_id)
        encoded = self.encoder(tokens, mask)
        if self.pooling == "cls":
            pooled = encoded[:, 0]
        else:
            weights = mask.unsqueeze(-1).to(encoded.dtype)
            pooled = (encoded * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        logits = self.output(self.dropout(pooled))
        return self.classify(logits.float(), label)
