"""A global batch per optimizer step, cut for the world at hand: pure arithmetic beside :mod:`.balance`.

``data_loader.global_batch_size`` fixes how many samples make one optimizer step, whatever the number of
workers; each worker's micro-batch and the accumulation steps follow from the data-parallel workers,
their shares (``distributed.device_weights``) and an optional cap per worker
(``data_loader.max_micro_batch_size``, for memory). :func:`split_global_batch` picks the fewest accumulation
steps that cut the global batch into micro-batches of whole samples per worker, none over the cap. Each
step then covers the same samples on 1, 3 or 16 workers, and the loss is weighted by sample counts, so the
updates are the same (Horovod Elastic and DeepSpeed change the global batch with the world instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence


class GlobalBatchError(ValueError):
    """The global batch cannot be cut for this world; the message says why and names the world size."""


@dataclass(frozen=True)
class GlobalBatchSplit:
    global_batch: int
    workers: int
    accumulation: int
    #: each data-parallel worker's samples in one micro-batch
    per_worker: tuple[int, ...]

    @property
    def micro_batch(self) -> int:
        """Samples in one micro-batch over all workers."""
        return self.global_batch // self.accumulation

    @property
    def batch_size(self) -> int:
        """The loader's per-worker ``batch_size``: it cuts micro-batches of ``batch_size x workers``
        and splits each by the shares."""
        return self.micro_batch // self.workers

    def describe(self) -> str:
        split = " + ".join(str(count) for count in self.per_worker)
        return (f"global batch {self.global_batch} = {self.accumulation} accumulation step(s) x {self.micro_batch} "
                f"samples, split {split} over {self.workers} data-parallel worker(s)")


def split_global_batch(global_batch: int, workers: int, shares: Sequence[float] | None = None,
                       max_micro_batch: int | None = None, world_size: int | None = None) -> GlobalBatchSplit:
    """The fewest accumulation steps (and each worker's micro-batch) that cut ``global_batch`` samples
    into whole samples per worker under ``shares`` (equal when None), none above ``max_micro_batch``.
    ``world_size`` (processes, for messages) is ``workers`` unless model-parallel ranks share a worker's data."""
    world_size = world_size or workers
    weights = [Fraction(share).limit_denominator(10**6) for share in (shares or [1] * workers)]
    if len(weights) != workers:
        raise GlobalBatchError(f"{len(weights)} shares for {workers} data-parallel workers")
    if global_batch < workers:
        raise GlobalBatchError(f"{global_batch} samples are fewer than the {workers} data-parallel workers "
                               f"of world size {world_size}: each needs at least one")
    total = sum(weights)
    for accumulation in range(1, global_batch + 1):
        if global_batch % accumulation:
            continue
        micro = global_batch // accumulation
        if micro % workers or micro < workers:
            continue
        exact = [micro * weight / total for weight in weights]
        if any(count.denominator != 1 or count == 0 for count in exact):
            continue
        per_worker = tuple(int(count) for count in exact)
        if max_micro_batch is not None and max(per_worker) > max_micro_batch:
            continue
        return GlobalBatchSplit(global_batch, workers, accumulation, per_worker)
    shared = "" if shares is None else f" in the shares {[float(share) for share in shares]}"
    capped = "" if max_micro_batch is None else f", at most {max_micro_batch} per worker"
    raise GlobalBatchError(f"{global_batch} samples do not cut into micro-batches of whole samples for the "
                           f"{workers} data-parallel worker(s) of world size {world_size}{shared}{capped}")
