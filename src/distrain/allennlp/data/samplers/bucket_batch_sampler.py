"""``allennlp.data.samplers.bucket_batch_sampler``: distrain's ``bucket`` sampler with AllenNLP's calls on it."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from distrain.allennlp.data.samplers.batch_sampler import InstanceBatches, count_batches
from distrain.data.batch_samplers.bucket import BucketBatchSampler as DistrainBucketBatchSampler

__all__ = ["BucketBatchSampler"]


class BucketBatchSampler(InstanceBatches, DistrainBucketBatchSampler):
    def __init__(self, batch_size: int, sorting_keys: list[str] | None = None, padding_noise: float = 0.1,
                 drop_last: bool = False, shuffle: bool = True) -> None:
        super().__init__(batch_size, sorting_keys, padding_noise, drop_last, shuffle)

    def get_batch_indices(self, instances: Sequence[Any]) -> Iterable[list[int]]:
        yield from self._global_batch_indices(instances, self.batch_size)

    def get_num_batches(self, instances: Sequence[Any]) -> int:
        return count_batches(len(instances), self.batch_size, self.drop_last)

    def get_batch_size(self) -> int:
        return self.batch_size
