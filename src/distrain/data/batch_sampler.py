"""BatchSampler base: a component that cuts one epoch's samples into *global* batches (``data_loader.batch_sampler``).

A batch sampler sees the whole split and the global batch size (per-worker batch × data-parallel
workers) and draws from a generator seeded by (seed, epoch) only, so its batches never depend on the
world size; the loader then splits each global batch among the workers as it splits any other.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from distrain.registry import Registrable

#: a field name → each sample's length in that field (raises KeyError for a field the data lacks)
Lengths = Callable[[str], np.ndarray]


class BatchSampler(Registrable):
    """``batch_size``, when given, is the per-worker batch size (it replaces ``data_loader.batch_size``)."""

    batch_size: int | None = None
    drop_last: bool = False
    shuffle: bool = True

    def global_batches(self, size: int, lengths: Lengths, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
        """One epoch's global batches of sample indices (``batch_size`` is the global batch size)."""
        raise NotImplementedError
