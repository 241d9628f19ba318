"""Spearman's rank correlation, exact: ranks over all pairs, gathered from every worker."""

from __future__ import annotations

import torch

from distrain.metrics.classes import flat_weights
from distrain.metrics.metric import Metric
from distrain.metrics.ranking import average_ranks, pearson_from_centered


@Metric.register("spearman_correlation")
class SpearmanCorrelation(Metric):
    """Spearman's rank correlation of predictions with gold values, exact.

    ``predictions`` and ``gold_labels`` of one shape; every unmasked element is one pair. Pearson's r of the ranks, ties sharing their mean rank: ``scipy.stats.spearmanr``. Ranks
    depend on every value, so the pairs are gathered, not summed. A constant side gives 0.
    """

    gathered = ("x", "y")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        if predictions.shape != gold_labels.shape:
            raise ValueError(f"spearman_correlation: shapes differ, {tuple(predictions.shape)} and {tuple(gold_labels.shape)}")
        keep = flat_weights(gold_labels, mask) > 0
        self.collect(x=predictions.reshape(-1)[keep], y=gold_labels.reshape(-1)[keep])

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        x = stats.get("x", torch.zeros(0, dtype=torch.float64))
        y = stats.get("y", torch.zeros(0, dtype=torch.float64))
        return pearson_from_centered(average_ranks(x), average_ranks(y))
