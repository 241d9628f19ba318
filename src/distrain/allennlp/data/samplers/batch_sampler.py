"""``allennlp.data.samplers.batch_sampler``: AllenNLP's batch sampler API over a list of instances.

distrain's batch samplers cut a whole split into global batches from each sample's lengths
(:meth:`~distrain.data.batch_sampler.BatchSampler.global_batches`); AllenNLP's take the instances themselves
(``get_batch_indices(instances)``). This mixin gives a distrain sampler the second form: each instance's length in a
field is ``len(field)``, as AllenNLP measured it, and the draw is seeded from Python's ``random``, which AllenNLP's
samplers used (so ``random.seed`` makes them repeat).
"""

from __future__ import annotations

import math
import random
from typing import Any, Iterable, Sequence

import numpy as np

from distrain.config.errors import ConfigError
from distrain.data.batch_sampler import BatchSampler as DistrainBatchSampler

__all__ = ["BatchSampler", "InstanceBatches"]


class InstanceBatches:
    """AllenNLP's calls on a sampler that has ``sorting_keys``, ``batch_size`` and ``global_batches``."""

    sorting_keys: list[str] | None = None

    def _lengths(self, instances: Sequence[Any]) -> Any:
        def lengths(key: str | None) -> np.ndarray:
            key = key or self.sorting_keys[0]
            for instance in instances:
                if key not in instance:
                    raise ConfigError(f'Sorting key "{key}" is not a field in instance. Available fields/keys are '
                                      f"{list(instance)}.")
            return np.asarray([len(instance[key]) for instance in instances], dtype=np.int64)
        return lengths

    def _guess_sorting_keys(self, instances: Iterable[Any], num_instances: int = 10) -> None:
        """The field longest in the first ``num_instances`` instances becomes the sorting key."""
        longest, longest_length = None, 0
        for number, instance in enumerate(instances):
            for name, field in instance.items():
                try:
                    length = len(field)
                except TypeError:
                    continue
                if length > longest_length:
                    longest, longest_length = name, length
            if number >= num_instances:
                break
        if longest is None:
            raise ConfigError("no field of the instances has a length to sort by; give sorting_keys")
        self.sorting_keys = [longest]

    def _global_batch_indices(self, instances: Sequence[Any], batch_size: int) -> list[list[int]]:
        instances = list(instances)
        if not self.sorting_keys:
            self._guess_sorting_keys(instances)
        batches = self.global_batches(len(instances), self._lengths(instances), batch_size,
                                      random.getrandbits(32), 0)
        return [[int(index) for index in batch] for batch in batches]


class BatchSampler(DistrainBatchSampler):
    """AllenNLP's base: ``get_batch_indices``, ``get_num_batches`` and ``get_batch_size`` over instances."""

    def get_batch_indices(self, instances: Sequence[Any]) -> Iterable[list[int]]:
        raise NotImplementedError

    def get_num_batches(self, instances: Sequence[Any]) -> int:
        raise NotImplementedError

    def get_batch_size(self) -> int | None:
        return self.batch_size


def count_batches(count: int, batch_size: int, drop_last: bool) -> int:
    return count // batch_size if drop_last else math.ceil(count / batch_size)
