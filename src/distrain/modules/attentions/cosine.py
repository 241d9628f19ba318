"""``cosine``: the cosine of each row with the vector."""

from __future__ import annotations

import torch

from distrain.modules.attention import Attention
from distrain.modules.matrix_attentions.cosine import unit_rows


@Attention.register("cosine")
class CosineAttention(Attention):
    """The cosine similarity of the vector with each row; no parameters."""

    def scores(self, vector: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        return torch.bmm(unit_rows(vector).unsqueeze(1), unit_rows(matrix).transpose(-1, -2)).squeeze(1)
