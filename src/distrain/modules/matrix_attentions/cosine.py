"""``cosine``: the cosine of every pair of rows."""

from __future__ import annotations

import torch

from distrain.modules.masked_softmax import TINY
from distrain.modules.matrix_attention import MatrixAttention


def unit_rows(matrix: torch.Tensor) -> torch.Tensor:
    """Rows scaled to length 1 (AllenNLP adds a tiny value to the norm, so a zero row stays zero)."""
    return matrix / (matrix.norm(p=2, dim=-1, keepdim=True) + TINY)


@MatrixAttention.register("cosine")
class CosineMatrixAttention(MatrixAttention):
    """The cosine similarity of every pair of rows; no parameters."""

    def forward(self, matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:
        return torch.bmm(unit_rows(matrix_1), unit_rows(matrix_2).transpose(-1, -2))
