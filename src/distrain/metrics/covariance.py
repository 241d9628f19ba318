"""The sample covariance of predictions and gold values (divided by n - 1, as ``numpy.cov``), from summed moments."""

from __future__ import annotations

import torch

from distrain.metrics.metric import Metric
from distrain.metrics.pearson_correlation import PearsonCorrelation


@Metric.register("covariance")
class Covariance(PearsonCorrelation):
    """Covariance of ``predictions`` with ``gold_labels`` (one shape; each unmasked element is one pair, a mask of
    counts weights it as ``numpy.cov``'s ``fweights``). The moments are Pearson's, summed over workers; fewer than
    two pairs give 0."""

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        count = float(stats.get("count", 0.0))
        if count <= 1:
            return 0.0
        return (float(stats["xy"]) - float(stats["x"]) * float(stats["y"]) / count) / (count - 1)
