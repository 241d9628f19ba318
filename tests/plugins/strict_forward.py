"""A model whose ``forward`` names every input and takes nothing else (no ``**kwargs``), as AllenNLP
models are written: the reader/forward field check can then name a field that no argument takes."""

from __future__ import annotations

import torch

from distrain import Model, get_token_ids_from_text_field_tensors
from distrain.metrics.categorical_accuracy import CategoricalAccuracy


@Model.register("strict_forward_classifier")
class StrictForwardClassifier(Model):
    def __init__(self, vocab, dim: int = 4):
        super().__init__(vocab, {"accuracy": CategoricalAccuracy()})
        self.embedding = torch.nn.EmbeddingBag(vocab.size("tokens"), dim, mode="mean", padding_idx=0)
        self.output = torch.nn.Linear(dim, vocab.size("labels"))

    def forward(self, tokens, label=None):
        logits = self.output(self.embedding(get_token_ids_from_text_field_tensors(tokens)))
        output = {"logits": logits}
        if label is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, label)
        return output
