"""``allennlp.data.data_loaders.multitask_epoch_sampler``: what share of a multi-task epoch each dataset gets."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["MultiTaskEpochSampler", "UniformSampler", "WeightedSampler"]


class MultiTaskEpochSampler:
    def get_task_proportions(self, data_loaders: Mapping[str, Any]) -> dict[str, float]:
        raise NotImplementedError


class UniformSampler(MultiTaskEpochSampler):
    """Every dataset an equal share."""

    def get_task_proportions(self, data_loaders: Mapping[str, Any]) -> dict[str, float]:
        return {name: 1 / len(data_loaders) for name in data_loaders}


class WeightedSampler(MultiTaskEpochSampler):
    """Shares in proportion to ``weights``."""

    def __init__(self, weights: Mapping[str, float]) -> None:
        self.weights = dict(weights)

    def get_task_proportions(self, data_loaders: Mapping[str, Any]) -> dict[str, float]:
        total = sum(self.weights[name] for name in data_loaders)
        return {name: self.weights[name] / total for name in data_loaders}
