"""``dot_product`` and ``scaled_dot_product``: ``x · y`` (divided by the square root of the width)."""

from __future__ import annotations

import math

import torch

from distrain.modules.matrix_attention import MatrixAttention


@MatrixAttention.register("dot_product")
class DotProductMatrixAttention(MatrixAttention):
    """``x · y`` for every pair of rows; no parameters."""

    def forward(self, matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:
        return matrix_1.matmul(matrix_2.transpose(-1, -2))


@MatrixAttention.register("scaled_dot_product")
class ScaledDotProductMatrixAttention(DotProductMatrixAttention):
    """``x · y / sqrt(d)``, the transformer's scaling, so wide rows do not saturate a softmax."""

    def forward(self, matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:
        return super().forward(matrix_1, matrix_2) / math.sqrt(matrix_1.size(-1))
