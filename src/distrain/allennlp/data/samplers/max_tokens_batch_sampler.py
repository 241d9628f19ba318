"""``allennlp.data.samplers.max_tokens_batch_sampler``: AllenNLP's batches of at most ``max_tokens`` padded
tokens: the instances sorted by their (noisy) length in the sorting key, then cut where the next one would make
the batch's longest length times its size exceed ``max_tokens``; the batches shuffled."""

from __future__ import annotations

import random
from typing import Any, Iterable, Sequence

import numpy as np

from distrain.allennlp.data.samplers.batch_sampler import InstanceBatches
from distrain.data.batch_sampler import BatchSampler, Lengths

__all__ = ["MaxTokensBatchSampler"]


class MaxTokensBatchSampler(InstanceBatches, BatchSampler):
    def __init__(self, max_tokens: int, sorting_keys: list[str] | None = None, padding_noise: float = 0.1) -> None:
        self.max_tokens = max_tokens
        self.sorting_keys = sorting_keys
        self.padding_noise = padding_noise

    def global_batches(self, size: int, lengths: Lengths, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
        rng = np.random.default_rng([seed, epoch])
        length = lengths(self.sorting_keys[0] if self.sorting_keys else None)
        noisy = length.astype(np.float64)
        if self.padding_noise:
            reach = noisy * self.padding_noise
            noisy = noisy + rng.uniform(-reach, reach)
        batches, current, longest = [], [], 0
        for index in np.argsort(noisy, kind="stable"):
            size_with = max(longest, int(length[index])) * (len(current) + 1)
            if current and size_with > self.max_tokens:
                batches.append(np.asarray(current))
                current, longest = [], 0
            current.append(int(index))
            longest = max(longest, int(length[index]))
        if current:
            batches.append(np.asarray(current))
        return [batches[i] for i in rng.permutation(len(batches))]

    def get_batch_indices(self, instances: Sequence[Any]) -> Iterable[list[int]]:
        yield from self._global_batch_indices(instances, 0)

    def get_num_batches(self, instances: Sequence[Any]) -> int:
        return sum(1 for _ in self.get_batch_indices(instances))

    def get_batch_size(self) -> None:
        return None
