"""Shared input handling for metrics over class predictions: scores or ids, masks, flattening."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from distrain.metrics.metric import Metric


def predicted_classes(predictions: torch.Tensor, gold_labels: torch.Tensor) -> torch.Tensor:
    """Class ids: the argmax when ``predictions`` has one more (class) dimension than the gold."""
    predictions = predictions.detach()
    if predictions.dim() == gold_labels.dim() + 1:
        return predictions.argmax(-1)
    if predictions.shape != gold_labels.shape:
        raise ValueError(
            f"predictions of shape {tuple(predictions.shape)} fit neither gold labels of shape "
            f"{tuple(gold_labels.shape)} (class ids) nor that shape plus a class dimension (scores)"
        )
    return predictions.long()


def flat_weights(gold_labels: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """One float64 weight per gold item: the mask, or ones."""
    if mask is None:
        return torch.ones(gold_labels.numel(), dtype=torch.float64, device=gold_labels.device)
    if mask.shape != gold_labels.shape:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not fit gold labels of shape {tuple(gold_labels.shape)}")
    return mask.detach().reshape(-1).to(torch.float64)


def check_gold_range(metric: Metric, gold: torch.Tensor, weights: torch.Tensor, num_classes: int, name: str) -> None:
    """Unmasked gold ids must name a class; masked ones may be padding such as -100.

    On the CPU the check is immediate. On an accelerator, reading its answer would cost a host-device
    synchronisation per batch, so the count of bad ids stays on the device and the error is raised
    when the metric is next read (:meth:`Metric.defer_check`)."""
    if gold.device.type != "cpu":
        outside = ((gold < 0) | (gold >= num_classes)) & (weights > 0)
        metric.defer_check(outside.sum(), f"{name}: gold label ids must be in [0, {num_classes})")
        return
    counted = gold[weights > 0]
    if counted.numel() and (int(counted.min()) < 0 or int(counted.max()) >= num_classes):
        raise ValueError(f"{name}: gold label ids must be in [0, {num_classes}), got {counted.min()}..{counted.max()}")
