"""``dot_product`` and ``scaled_dot_product``: each row's dot product with the vector."""

from __future__ import annotations

import math

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.attention import Attention


@Attention.register("dot_product")
class DotProductAttention(Attention):
    """``row · vector``; no parameters."""

    def scores(self, vector: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        return matrix.bmm(vector.unsqueeze(-1)).squeeze(-1)


@Attention.register("scaled_dot_product")
class ScaledDotProductAttention(DotProductAttention):
    """``row · vector / sqrt(scaling_factor)``, the factor being the rows' width unless given."""

    def __init__(self, scaling_factor: PositiveInt | None = None, normalize: bool = True) -> None:
        super().__init__(normalize)
        self.scaling_factor = scaling_factor

    def scores(self, vector: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        return super().scores(vector, matrix) / math.sqrt(self.scaling_factor or matrix.size(-1))
