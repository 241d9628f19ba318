"""``two_means``: the difference of the two groups' mean embeddings (Dev & Phillips 2019, AllenNLP's
``TwoMeansBiasDirection``); the groups need not pair up."""

from __future__ import annotations

import torch

from distrain.zoo.fairness.modules.bias_direction import BiasDirection


@BiasDirection.register("two_means")
class TwoMeansBiasDirection(BiasDirection):
    """The difference of the two groups' mean embeddings; the groups need not pair up."""

    def direction(self, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
        return first.mean(dim=0) - second.mean(dim=0)
