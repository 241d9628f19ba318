"""``additive``: Bahdanau's attention, ``vᵀ tanh(W vector + U row)``."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.attention import Attention


@Attention.register("additive")
class AdditiveAttention(Attention):
    """``vᵀ tanh(vector W + row U)``: a one-hidden-layer score (Bahdanau et al., 2015); all three start
    Xavier-uniform, as AllenNLP's."""

    def __init__(self, vector_dim: PositiveInt, matrix_dim: PositiveInt, normalize: bool = True) -> None:
        super().__init__(normalize)
        self.w_matrix = torch.nn.Parameter(torch.empty(vector_dim, vector_dim))
        self.u_matrix = torch.nn.Parameter(torch.empty(matrix_dim, vector_dim))
        self.v_vector = torch.nn.Parameter(torch.empty(vector_dim, 1))
        for parameter in (self.w_matrix, self.u_matrix, self.v_vector):
            torch.nn.init.xavier_uniform_(parameter)

    def scores(self, vector: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        hidden = torch.tanh(vector.matmul(self.w_matrix).unsqueeze(1) + matrix.matmul(self.u_matrix))
        return hidden.matmul(self.v_vector).squeeze(2)
