"""``bilinear``: ``vector W rowᵀ + b``."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.attention import Attention
from distrain.modules.feedforward import ACTIVATIONS, Activation


@Attention.register("bilinear")
class BilinearAttention(Attention):
    """``activation(vector W rowᵀ + b)``; W starts Xavier-uniform, b at 0, as AllenNLP's."""

    def __init__(self, vector_dim: PositiveInt, matrix_dim: PositiveInt, activation: Activation | None = None,
                 normalize: bool = True) -> None:
        super().__init__(normalize)
        self.weight_matrix = torch.nn.Parameter(torch.empty(vector_dim, matrix_dim))
        self.bias = torch.nn.Parameter(torch.zeros(1))
        self.activation = ACTIVATIONS[activation or "linear"]()
        torch.nn.init.xavier_uniform_(self.weight_matrix)

    def scores(self, vector: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        projected = vector.mm(self.weight_matrix).unsqueeze(1)
        return self.activation(projected.bmm(matrix.transpose(1, 2)).squeeze(1) + self.bias)
