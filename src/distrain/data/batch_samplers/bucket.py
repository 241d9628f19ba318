"""AllenNLP's ``bucket`` batch sampler on global batches: similar lengths batched together.

As AllenNLP's ``BucketBatchSampler``: each sample's length in the first of ``sorting_keys`` gets noise
uniform in ±``padding_noise`` × length, samples are sorted by that noisy length (stably), cut into batches
in that order and the batches shuffled. AllenNLP did this per worker on its own shard; here it is done
once on the whole split with global batches, drawn from (seed, epoch), so the global batches (and the
updates) are the same on any number of workers. Without ``sorting_keys`` the longest field is used.
"""

from __future__ import annotations

import numpy as np

from distrain.config.constraints import NonNegativeFloat, PositiveInt
from distrain.data.batch_sampler import BatchSampler, Lengths


@BatchSampler.register("bucket")
class BucketBatchSampler(BatchSampler):
    """AllenNLP's bucketing: global batches of similar lengths (with noise), the batches shuffled."""

    def __init__(self, batch_size: PositiveInt | None = None, sorting_keys: list[str] | None = None,
                 padding_noise: NonNegativeFloat = 0.1, drop_last: bool = False, shuffle: bool = True) -> None:
        self.batch_size = batch_size
        self.sorting_keys = sorting_keys
        self.padding_noise = padding_noise if shuffle else 0.0  # AllenNLP: no shuffle, no noise
        self.drop_last = drop_last
        self.shuffle = shuffle

    def global_batches(self, size: int, lengths: Lengths, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
        rng = np.random.default_rng([seed, epoch])
        key = self.sorting_keys[0] if self.sorting_keys else None
        length = lengths(key).astype(np.float64)
        if self.padding_noise:
            reach = length * self.padding_noise
            length = length + rng.uniform(-reach, reach)
        order = np.argsort(length, kind="stable")
        batches = [order[start:start + batch_size] for start in range(0, size, batch_size)]
        if self.drop_last and batches and len(batches[-1]) < batch_size:
            batches.pop()
        if self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        return batches
