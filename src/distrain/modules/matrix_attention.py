"""Matrix attentions: the unnormalised similarity of every row of one matrix with every row of another,
(batch, n, d1) and (batch, m, d2) in, (batch, n, m) out. There is no mask: the caller masks what it
normalises (AllenNLP's ``MatrixAttention``; BiDAF's and ESIM's similarity)."""

from __future__ import annotations

import torch

from distrain.registry import Registrable


class MatrixAttention(torch.nn.Module, Registrable):
    default_implementation = "dot_product"

    @classmethod
    def allennlp_name(cls, name: str) -> str:
        """The name distrain gives AllenNLP's parameter ``name`` (its private ``_weight_matrix`` is ``weight_matrix``)."""
        return name.lstrip("_")

    def forward(self, matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
