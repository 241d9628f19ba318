"""The mean of the values passed in, weighted by how many items each value stands for."""

from __future__ import annotations

import torch

from distrain.metrics.metric import Metric


@Metric.register("average")
class Average(Metric):
    """The weighted mean of values passed in (losses, lengths, anything a model computes).

    ``metric(value)`` adds one value; ``metric(mean, count=n)`` a mean over ``n`` items;
    ``metric(values, mask=mask)`` every unmasked element of a tensor."""

    summed = ("sum", "count")

    def __call__(  # type: ignore[override]
        self, value: torch.Tensor | float, count: torch.Tensor | float = 1.0, mask: torch.Tensor | None = None
    ) -> None:
        value = torch.as_tensor(value).detach().to(torch.float64)
        if mask is not None:
            weights = mask.detach().to(torch.float64).reshape(value.shape)
            self.accumulate(sum=(value * weights).sum(), count=weights.sum())
        elif value.numel() == 1:
            count = torch.as_tensor(count).detach().to(torch.float64)
            self.accumulate(sum=value.reshape(()) * count, count=count)
        else:
            self.accumulate(sum=value.sum(), count=value.numel())

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        count = float(stats.get("count", 0.0))
        return float(stats.get("sum", 0.0)) / count if count > 0 else 0.0
