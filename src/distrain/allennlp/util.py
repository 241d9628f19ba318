"""The helpers of ``allennlp.nn.util`` that AllenNLP models call most."""

from __future__ import annotations

import torch

from distrain.modules.text_field_embedder import get_text_field_mask

__all__ = ["get_text_field_mask", "masked_mean", "sequence_cross_entropy_with_logits"]


def masked_mean(vector: torch.Tensor, mask: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """The mean of ``vector`` over ``dim`` counting only positions where ``mask`` is true."""
    weights = mask.to(vector.dtype)
    total = (vector * weights).sum(dim=dim, keepdim=keepdim)
    return total / weights.sum(dim=dim, keepdim=keepdim).clamp(min=1e-13)


def sequence_cross_entropy_with_logits(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor,
                                       average: str | None = "batch") -> torch.Tensor:
    """Token-level cross entropy, masked by ``weights``; ``"batch"`` averages per sequence then over the
    batch (AllenNLP's default), ``"token"`` over all tokens, ``None`` returns one loss per sequence."""
    weights = weights.to(logits.dtype)
    losses = torch.nn.functional.cross_entropy(logits.flatten(0, -2), targets.flatten().clamp(min=0),
                                               reduction="none").view_as(weights) * weights
    if average == "token":
        return losses.sum() / weights.sum().clamp(min=1e-13)
    per_sequence = losses.sum(1) / weights.sum(1).clamp(min=1e-13)
    if average == "batch":
        return per_sequence.sum() / (weights.sum(1) > 0).sum().clamp(min=1)
    return per_sequence
