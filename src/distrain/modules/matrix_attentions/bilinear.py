"""``bilinear``: ``x W yᵀ + b``, optionally with a 1 appended to both inputs (``use_input_biases``), so the
score also holds a linear term in each input."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.feedforward import ACTIVATIONS, Activation
from distrain.modules.matrix_attention import MatrixAttention


@MatrixAttention.register("bilinear")
class BilinearMatrixAttention(MatrixAttention):
    """``activation(x W yᵀ + b)``; ``label_dim`` > 1 gives one score per label, (batch, labels, n, m), as a
    ``torch.nn.Bilinear`` over matrices. W starts Xavier-uniform, b at 0, as AllenNLP's."""

    def __init__(self, matrix_1_dim: PositiveInt, matrix_2_dim: PositiveInt, activation: Activation | None = None,
                 use_input_biases: bool = False, label_dim: PositiveInt = 1) -> None:
        super().__init__()
        extra = 1 if use_input_biases else 0
        shape = (matrix_1_dim + extra, matrix_2_dim + extra)
        self.weight_matrix = torch.nn.Parameter(torch.empty(shape if label_dim == 1 else (label_dim, *shape)))
        self.bias = torch.nn.Parameter(torch.zeros(1))
        self.activation = ACTIVATIONS[activation or "linear"]()
        self.use_input_biases = use_input_biases
        torch.nn.init.xavier_uniform_(self.weight_matrix)

    def forward(self, matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:
        if self.use_input_biases:
            matrix_1 = torch.cat([matrix_1, matrix_1.new_ones(*matrix_1.shape[:-1], 1)], -1)
            matrix_2 = torch.cat([matrix_2, matrix_2.new_ones(*matrix_2.shape[:-1], 1)], -1)
        weight = self.weight_matrix if self.weight_matrix.dim() == 3 else self.weight_matrix.unsqueeze(0)
        scores = torch.matmul(torch.matmul(matrix_1.unsqueeze(1), weight), matrix_2.unsqueeze(1).transpose(2, 3))
        return self.activation(scores.squeeze(1) + self.bias)
