"""Fraction of items whose prediction equals the gold value in every (unmasked) position."""

from __future__ import annotations

import torch

from distrain.metrics.metric import Metric


@Metric.register("boolean_accuracy")
class BooleanAccuracy(Metric):
    """Fraction of items predicted exactly right.

    ``predictions`` and ``gold_labels`` of one shape ``[B, ...]``; item ``b`` is right when all its
    unmasked entries match. An item whose entries are all masked does not count at all."""

    summed = ("correct", "total")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        if predictions.shape != gold_labels.shape:
            raise ValueError(
                f"boolean_accuracy needs predictions and gold labels of one shape; got "
                f"{tuple(predictions.shape)} and {tuple(gold_labels.shape)}"
            )
        if mask is not None and mask.shape != predictions.shape:
            raise ValueError(f"boolean_accuracy: the mask {tuple(mask.shape)} is not the predictions' "
                             f"{tuple(predictions.shape)}")
        batch = predictions.shape[0] if predictions.dim() else 1
        if batch == 0:
            return
        equal = predictions.eq(gold_labels).reshape(batch, -1)
        if mask is None:
            counted = torch.ones(batch, dtype=torch.bool, device=equal.device)
        else:
            keep = mask.detach().reshape(batch, -1).bool()
            equal = equal | ~keep
            counted = keep.any(-1)
        correct = equal.all(-1) & counted
        self.accumulate(correct=correct.sum(), total=counted.sum())

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        total = float(stats.get("total", 0.0))
        return float(stats.get("correct", 0.0)) / total if total > 0 else 0.0
