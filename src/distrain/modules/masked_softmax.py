"""AllenNLP's ``masked_softmax`` and ``weighted_sum``, the two steps every attention ends with.

The softmax is AllenNLP's default (not "memory efficient") form: masked scores are zeroed, the softmax
taken, masked weights zeroed again and the rest renormalised, so a row with nothing unmasked is all
zeros rather than NaN, and the weights equal AllenNLP's to float rounding. ``memory_efficient=True`` is AllenNLP's
other form (masked scores set to the lowest float, then one softmax), kept where a model asked for it (QANet).
"""

from __future__ import annotations

import torch

TINY = 1e-13  # AllenNLP's tiny_value_of_dtype for float32 and float64


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None, dim: int = -1,
                   memory_efficient: bool = False) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=dim)
    while mask.dim() < scores.dim():
        mask = mask.unsqueeze(1)
    if memory_efficient:
        return torch.softmax(scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min), dim=dim)
    weights = torch.softmax(scores * mask, dim=dim) * mask
    return weights / (weights.sum(dim=dim, keepdim=True) + TINY)


def weighted_sum(matrix: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """``matrix`` (…, n, d) weighted by ``weights`` (…, n) or (…, m, n): (…, d) or (…, m, d)."""
    if weights.dim() == matrix.dim() - 1:
        return (weights.unsqueeze(-1) * matrix).sum(-2)
    return torch.matmul(weights, matrix)
