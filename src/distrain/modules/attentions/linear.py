"""``linear``: ``w · [vector; row; vector*row; …] + b``, the pieces named by ``combination``."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.attention import Attention
from distrain.modules.combinations import Combination, combine_and_multiply
from distrain.modules.feedforward import ACTIVATIONS, Activation
from distrain.modules.matrix_attentions.linear import combined_width, uniform_weight_vector


@Attention.register("linear")
class LinearAttention(Attention):
    """``activation(w · combination(vector, row) + b)``, ``x`` being the vector and ``y`` the row; ``w`` starts
    uniform in ±sqrt(6 / (width + 1)), ``b`` at 0. AllenNLP 2.10.1 gives a (batch, batch, n) tensor for
    ``x*y`` and ``x/y`` pieces here (a broadcasting slip); distrain gives their (batch, n) scores."""

    def __init__(self, tensor_1_dim: PositiveInt, tensor_2_dim: PositiveInt, combination: Combination = "x,y",
                 activation: Activation | None = None, normalize: bool = True) -> None:
        super().__init__(normalize)
        self.combination = combination
        self.weight_vector = uniform_weight_vector(combined_width(combination, tensor_1_dim, tensor_2_dim))
        self.bias = torch.nn.Parameter(torch.zeros(1))
        self.activation = ACTIVATIONS[activation or "linear"]()

    def scores(self, vector: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        return self.activation(combine_and_multiply(self.combination, vector.unsqueeze(1), matrix, self.weight_vector)
                               + self.bias)
