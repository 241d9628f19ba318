"""Pearson's correlation between predictions and gold values, from summed moments."""

from __future__ import annotations

import math

import torch

from distrain.metrics.classes import flat_weights
from distrain.metrics.metric import Metric


@Metric.register("pearson_correlation")
class PearsonCorrelation(Metric):
    """Pearson's correlation of predictions with gold values.

    ``predictions`` and ``gold_labels`` of one shape; every unmasked element is one pair. Keeps the count and the sums of x, y, x², y², xy in float64 (summed over workers). The
    one-pass formula loses digits only when the values' mean is huge against their spread
    (relative error about 1e-16 × (mean/std)²). A constant side gives 0.
    """

    summed = ("count", "x", "y", "xx", "yy", "xy")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        if predictions.shape != gold_labels.shape:
            raise ValueError(f"pearson_correlation: shapes differ, {tuple(predictions.shape)} and {tuple(gold_labels.shape)}")
        weights = flat_weights(gold_labels, mask)
        x, y = predictions.reshape(-1).double(), gold_labels.reshape(-1).double()
        x, y = torch.where(weights > 0, x, 0.0), torch.where(weights > 0, y, 0.0)  # masked NaN/inf padding
        self.accumulate(
            count=weights.sum(), x=(weights * x).sum(), y=(weights * y).sum(),
            xx=(weights * x * x).sum(), yy=(weights * y * y).sum(), xy=(weights * x * y).sum(),
        )

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        count = float(stats.get("count", 0.0))
        if count <= 0:
            return 0.0
        sx, sy = float(stats["x"]), float(stats["y"])
        covariance = float(stats["xy"]) - sx * sy / count
        variance_x = float(stats["xx"]) - sx * sx / count
        variance_y = float(stats["yy"]) - sy * sy / count
        if variance_x <= 0 or variance_y <= 0:
            return 0.0
        return max(-1.0, min(1.0, covariance / math.sqrt(variance_x * variance_y)))
