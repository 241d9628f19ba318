"""``linear``: ``w · [x; y; x*y; …] + b`` for every pair of rows, the pieces named by ``combination``
(BiDAF's similarity is ``"x,y,x*y"``)."""

from __future__ import annotations

import math

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.combinations import Combination, combine_and_multiply
from distrain.modules.feedforward import ACTIVATIONS, Activation
from distrain.modules.matrix_attention import MatrixAttention


def combined_width(combination: str, tensor_1_dim: int, tensor_2_dim: int) -> int:
    """The width of ``w``: ``x`` pieces are ``tensor_1_dim`` wide, the others ``tensor_2_dim`` (a binary
    piece needs the two widths equal)."""
    return sum(tensor_1_dim if piece.strip() == "x" else tensor_2_dim for piece in combination.split(","))


def uniform_weight_vector(width: int) -> torch.nn.Parameter:
    """AllenNLP's start: uniform in ±sqrt(6 / (width + 1))."""
    bound = math.sqrt(6 / (width + 1))
    return torch.nn.Parameter(torch.empty(width).uniform_(-bound, bound))


@MatrixAttention.register("linear")
class LinearMatrixAttention(MatrixAttention):
    """``activation(w · combination(x, y) + b)``; ``w`` starts uniform in ±sqrt(6 / (width + 1)), ``b`` at 0."""

    def __init__(self, tensor_1_dim: PositiveInt, tensor_2_dim: PositiveInt, combination: Combination = "x,y",
                 activation: Activation | None = None) -> None:
        super().__init__()
        self.combination = combination
        self.weight_vector = uniform_weight_vector(combined_width(combination, tensor_1_dim, tensor_2_dim))
        self.bias = torch.nn.Parameter(torch.zeros(1))
        self.activation = ACTIVATIONS[activation or "linear"]()

    def forward(self, matrix_1: torch.Tensor, matrix_2: torch.Tensor) -> torch.Tensor:
        scores = combine_and_multiply(self.combination, matrix_1.unsqueeze(2), matrix_2.unsqueeze(1), self.weight_vector)
        return self.activation(scores + self.bias)
