"""Ranks with ties averaged (scipy's ``rankdata(method="average")``), for AUC and Spearman."""

from __future__ import annotations

import torch


def average_ranks(values: torch.Tensor) -> torch.Tensor:
    """1-based float64 ranks of a 1-D tensor; equal values share the mean of their ranks."""
    count = values.numel()
    if count == 0:
        return torch.zeros(0, dtype=torch.float64)
    ordered, order = torch.sort(values, stable=True)
    starts_group = torch.ones(count, dtype=torch.bool)
    starts_group[1:] = ordered[1:] != ordered[:-1]
    group = torch.cumsum(starts_group.long(), 0) - 1
    first_position = torch.nonzero(starts_group).reshape(-1).double()
    group_size = torch.bincount(group).double()
    group_rank = first_position + (group_size + 1) / 2
    ranks = torch.empty(count, dtype=torch.float64)
    ranks[order] = group_rank[group]
    return ranks


def pearson_from_centered(x: torch.Tensor, y: torch.Tensor) -> float:
    """Pearson's r computed in two passes (mean first), 0 when either side is constant or empty."""
    if x.numel() == 0:
        return 0.0
    dx, dy = x - x.mean(), y - y.mean()
    denominator = torch.sqrt((dx * dx).sum() * (dy * dy).sum())
    return float((dx * dy).sum() / denominator) if denominator > 0 else 0.0
