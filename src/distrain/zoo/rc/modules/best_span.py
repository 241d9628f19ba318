"""The best answer span from start and end scores: AllenNLP's ``get_best_span``, a pure function.

The span maximises ``start[i] + end[j]`` over ``i <= j`` with no length limit; ties go to the first in row-major
order (the smallest start, then the smallest end), as ``argmax`` over the flattened matrix gives in AllenNLP.
Masked positions should already hold a very negative score (their sums then never win).
"""

from __future__ import annotations

import torch


def get_best_span(span_start_logits: torch.Tensor, span_end_logits: torch.Tensor) -> torch.Tensor:
    """``(batch, length)`` scores → ``(batch, 2)`` inclusive (start, end) token indices."""
    if span_start_logits.dim() != 2 or span_end_logits.dim() != 2:
        raise ValueError("get_best_span needs (batch_size, passage_length) scores")
    batch_size, length = span_start_logits.shape
    scores = span_start_logits.unsqueeze(2) + span_end_logits.unsqueeze(1)
    before_start = torch.ones(length, length, dtype=torch.bool, device=scores.device).tril(-1)
    best = scores.masked_fill(before_start, float("-inf")).reshape(batch_size, -1).argmax(-1)
    return torch.stack([torch.div(best, length, rounding_mode="trunc"), best % length], dim=-1)
