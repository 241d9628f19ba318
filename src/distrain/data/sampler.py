"""Global batches: one sample order per epoch, cut into batches, each batch split among workers.

The order depends only on (seed, epoch), never on the number of workers, so a 1-worker run and an
N-worker run see the same global batches and make the same updates. A worker's share of a batch may
be empty; it then contributes zero weight, and every worker still takes the same number of steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np



class GlobalBatchSampler:
    """Deterministic global batches of sample indices for each epoch.

    ``batch_size`` is the global batch (per-worker batch × workers). With ``sort_by_length`` samples
    of similar length are batched together (within chunks of 100 batches, so order stays random);
    with ``max_tokens`` a batch also stops growing when its padded size would exceed that budget.
    """

    def __init__(
        self,
        size: int,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
        lengths: np.ndarray | None = None,
        sort_by_length: bool = False,
        max_tokens: int | None = None,
        batch_sampler: Any = None,
        field_lengths: Any = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.size = size
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.lengths = lengths
        self.sort_by_length = sort_by_length
        self.max_tokens = max_tokens
        #: a :class:`~distrain.data.batch_sampler.BatchSampler` that cuts the batches instead (e.g. ``bucket``),
        #: reading lengths through ``field_lengths`` (field name or None → each sample's length)
        self.batch_sampler = batch_sampler
        self.field_lengths = field_lengths
        if batch_sampler is not None:
            self.shuffle = batch_sampler.shuffle
        self._cache: tuple[int, list[np.ndarray]] | None = None

    def batches(self, epoch: int) -> list[np.ndarray]:
        if self._cache is not None and (self._cache[0] == epoch or not self.shuffle):
            return self._cache[1]
        if self.batch_sampler is not None:
            batches = self.batch_sampler.global_batches(self.size, self.field_lengths, self.batch_size, self.seed, epoch)
            self._cache = (epoch, batches)
            return batches
        rng = np.random.default_rng([self.seed, epoch])
        order = rng.permutation(self.size) if self.shuffle else np.arange(self.size)
        if self.sort_by_length and self.lengths is not None:
            chunk = self.batch_size * 100
            order = np.concatenate(
                [part[np.argsort(self.lengths[part], kind="stable")] for part in np.split(order, range(chunk, self.size, chunk))]
            ) if self.size else order
        batches = self._cut(order)
        if self.sort_by_length and self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        self._cache = (epoch, batches)
        return batches

    def _cut(self, order: np.ndarray) -> list[np.ndarray]:
        if self.max_tokens is None or self.lengths is None:
            batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
            if self.drop_last and batches and len(batches[-1]) < self.batch_size:
                batches.pop()
            return batches
        batches, current, longest = [], [], 0
        for index in order:
            length = int(self.lengths[index])
            grown = max(longest, length)
            if current and (len(current) >= self.batch_size or grown * (len(current) + 1) > self.max_tokens):
                batches.append(np.asarray(current))
                current, grown = [], length
            current.append(index)
            longest = grown
        if current:
            batches.append(np.asarray(current))
        return batches

    def __len__(self) -> int:
        return len(self.batches(0))
