"""Mean of |prediction - gold| over all unmasked elements."""

from __future__ import annotations

import torch

from distrain.metrics.classes import flat_weights
from distrain.metrics.metric import Metric


@Metric.register("mean_absolute_error")
class MeanAbsoluteError(Metric):
    """Mean absolute difference of predictions and gold values (same shapes; masked elements skipped)."""

    summed = ("absolute_error", "count")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        if predictions.shape != gold_labels.shape:
            raise ValueError(f"mean_absolute_error: shapes differ, {tuple(predictions.shape)} and {tuple(gold_labels.shape)}")
        errors = (predictions.double() - gold_labels.double()).abs().reshape(-1)
        weights = flat_weights(gold_labels, mask)
        self.accumulate(absolute_error=(errors * weights).sum(), count=weights.sum())

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        count = float(stats.get("count", 0.0))
        return float(stats.get("absolute_error", 0.0)) / count if count > 0 else 0.0
