"""The steps of AllenNLP's coreference model that choose what to compare: the best-scoring spans kept in document
order (:func:`masked_topk`), each kept span's antecedent candidates (the nearest ones, or with ``coarse_to_fine`` the
best by a cheap bilinear score), and the gold links of each candidate for the loss."""

from __future__ import annotations

import torch


def lowest(tensor: torch.Tensor) -> float:
    return torch.finfo(tensor.dtype).min


def masked_topk(scores: torch.Tensor, mask: torch.Tensor, k: int | torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The ``k`` best of the last dimension's unmasked scores, in their original order (AllenNLP's ``masked_topk``):
    their scores (masked ones at the lowest float), mask and indices. ``k`` may differ per row (a tensor of the other
    dimensions' shape): a row's places past its ``k`` repeat its last index, masked."""
    filled = scores.masked_fill(~mask, lowest(scores))
    most = k if isinstance(k, int) else int(k.max()) if k.numel() else 0
    _, indices = filled.topk(most, -1)
    within = torch.ones_like(indices, dtype=torch.bool)
    if not isinstance(k, int):
        within = torch.arange(most, device=scores.device) < k.unsqueeze(-1)
        if most:
            indices = torch.where(within, indices, indices.max(-1, keepdim=True).values)
    indices, _ = indices.sort(-1)
    return filled.gather(-1, indices), mask.gather(-1, indices) & within, indices


def valid_antecedents(count: int, most: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For each of ``count`` kept spans its ``most`` nearest earlier spans: their indices ``(count, most)`` (0 where
    there is none), their offsets ``(1, most)`` (1, 2, ...) and whether each exists ``(1, count, most)``."""
    targets = torch.arange(count, device=device).unsqueeze(1)
    offsets = (torch.arange(most, device=device) + 1).unsqueeze(0)
    raw = targets - offsets
    return raw.clamp(min=0), offsets, (raw >= 0).unsqueeze(0)


def distance_pruning(mention_scores: torch.Tensor, most: int) -> tuple[torch.Tensor, ...]:
    """The ``most`` nearest earlier spans: partial scores (the two mention scores summed), mask, offsets and indices,
    each ``(batch, kept, most)``."""
    indices, offsets, mask = valid_antecedents(mention_scores.shape[1], most, mention_scores.device)
    partial = mention_scores.unsqueeze(-1) + mention_scores[:, indices]
    return partial, mask.expand_as(partial), offsets.expand_as(partial), indices.unsqueeze(0).expand_as(partial)


def coarse_to_fine_pruning(embeddings: torch.Tensor, mention_scores: torch.Tensor, span_mask: torch.Tensor,
                           bilinear: torch.nn.Linear, most: int) -> tuple[torch.Tensor, ...]:
    """The ``most`` earlier spans of best partial score (the two mention scores and ``x_i · W x_j``), each kept span's
    in document order: partial scores, mask, offsets and indices, each ``(batch, kept, most)``."""
    batch, count = embeddings.shape[:2]
    _, _, valid = valid_antecedents(count, count, embeddings.device)
    pair_scores = torch.matmul(embeddings, bilinear(embeddings).transpose(1, 2))
    partial = mention_scores.unsqueeze(1) + mention_scores.unsqueeze(2) + pair_scores
    partial, mask, indices = masked_topk(partial, span_mask.unsqueeze(-1) & valid, most)
    positions = torch.arange(count, device=embeddings.device)
    offsets = (positions.unsqueeze(-1) - positions.unsqueeze(0)).unsqueeze(0).expand(batch, count, count)
    return partial, mask, offsets.gather(-1, indices), indices


def gold_antecedent_labels(span_labels: torch.Tensor, antecedent_labels: torch.Tensor) -> torch.Tensor:
    """1 where a kept span (cluster id ``span_labels``, ``(batch, kept, 1)``; -1: none) and a candidate share a
    cluster, with a first column, the "no antecedent" choice, 1 where no candidate does: ``(batch, kept, 1 + most)``."""
    pairwise = ((span_labels == antecedent_labels) & (span_labels >= 0)).float()
    return torch.cat([(1 - pairwise).prod(-1, keepdim=True), pairwise], -1)

