"""The mean of the values passed in, weighted by how many items each value stands for."""

from __future__ import annotations

import torch

from distrain.metrics.metric import Metric


@Metric.register("average")
class Average(Metric):
    def stat_names(self) -> list[str]:
        return ["sum", "count"]

    def __call__(self, value: torch.Tensor | float, count: torch.Tensor | float = 1.0, mask=None) -> None:  # type: ignore[override]
        value = torch.as_tensor(value, dtype=torch.float64)
        self.accumulate(sum=value.sum() * count if value.numel() == 1 else value.sum(),
                        count=count if value.numel() == 1 else value.numel())

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        count = float(stats.get("count", 0.0))
        return float(stats.get("sum", 0.0)) / count if count > 0 else 0.0
