"""Attentions: how much a vector attends to each row of a matrix, (batch, d1) and (batch, n, d2) in,
(batch, n) out, a distribution over the unmasked rows unless ``normalize`` is false (AllenNLP's
``Attention``; the decoder's attention over the encoder's outputs)."""

from __future__ import annotations

import torch

from distrain.modules.masked_softmax import masked_softmax
from distrain.registry import Registrable


class Attention(torch.nn.Module, Registrable):
    default_implementation = "dot_product"

    def __init__(self, normalize: bool = True) -> None:
        super().__init__()
        self.normalize = normalize

    @classmethod
    def allennlp_name(cls, name: str) -> str:
        """The name distrain gives AllenNLP's parameter ``name`` (its private ``_w_matrix`` is ``w_matrix``)."""
        return name.lstrip("_")

    def forward(self, vector: torch.Tensor, matrix: torch.Tensor, matrix_mask: torch.Tensor | None = None) -> torch.Tensor:
        scores = self.scores(vector, matrix)
        return masked_softmax(scores, matrix_mask) if self.normalize else scores

    def scores(self, vector: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        """The unnormalised score of each row, (batch, n)."""
        raise NotImplementedError
