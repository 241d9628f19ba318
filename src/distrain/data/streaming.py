"""Streaming (``lazy``) loading: every reader reads only its share, in bounded memory.

The global-batch path indexes the whole dataset up front and gives exact 1-vs-N equivalence.
Streaming trades that for scale: rank ``r`` of ``W``, loader process ``w`` of ``n``, is reader
``r·n + w`` of ``W·n`` (:class:`~distrain.data.reader.ReaderShard`); it indexes at most
``max_instances_in_memory`` instances at a time, shuffles within that chunk and cuts it into
batches. Each epoch still sees every record exactly once over all workers, but batches (and so the
updates) depend on the world size. Ranks may hold different amounts of data: before each batch
they agree (one all-reduce) on whether anyone still has data and on the global batch size, and a
rank that has run out contributes a zero-weight placeholder, so no rank hangs.
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import torch
import torch.utils.data

from distrain.data.loader import Batch, DataLoaderConfig
from distrain.data.reader import WHOLE, DataError, DatasetReader, ReaderShard
from distrain.job.heartbeat import beat
from distrain.distributed.world import SINGLE, World

logger = logging.getLogger(__name__)

#: instances indexed at a time when the config does not say
DEFAULT_CHUNK_BATCHES = 64


@dataclass
class StreamingSource:
    """A split that is streamed: where it is and how many instances it holds (counted once)."""

    path: str
    num_instances: int

    def __len__(self) -> int:
        return self.num_instances


def stream_batches(
    reader: DatasetReader, path: str, shard: ReaderShard, vocab: Any, batch_size: int,
    chunk_size: int, shuffle: bool, seed: int, epoch: int,
) -> Iterator[tuple[dict[str, Any], int]]:
    """``(inputs, size)`` batches of ``shard``'s share of ``path``, ``chunk_size`` instances at a time."""
    from distrain.data.dataset import IndexedDataset

    rng = np.random.default_rng([seed, epoch, shard.index, shard.count])
    previous = reader.shard
    reader.set_shard(shard)
    try:
        instances = reader.read(path)
        while True:
            chunk = list(itertools.islice(instances, chunk_size))
            if not chunk:
                logger.info("reader %d of %d parsed %d record(s) of %s", shard.index, shard.count,
                            reader.num_parsed, path)
                return
            data = IndexedDataset.from_instances(chunk, vocab)
            del chunk
            order = rng.permutation(len(data)) if shuffle else np.arange(len(data))
            for start in range(0, len(order), batch_size):
                mine = order[start : start + batch_size]
                yield data.batch(mine), len(mine)
    finally:
        reader.set_shard(previous)


class _ShareOfRank(torch.utils.data.IterableDataset):
    """What a torch DataLoader process runs: its own share, found from the worker info."""

    def __init__(self, loader: StreamingLoader) -> None:
        self.loader = loader

    def __iter__(self):
        return _share_iterator(self.loader)


def _share_iterator(loader: StreamingLoader):
    info = torch.utils.data.get_worker_info()
    worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
    try:
        yield from loader.batches_for(worker, workers)
    except DataError as error:
        # Re-raised by the main process as the same one-line error, not a wrapped traceback.
        yield ("error", str(error))


def _as_is(item: Any) -> Any:
    return item


@dataclass(eq=False)
class StreamingLoader:
    """Yields this rank's batches of a streamed split; every rank yields the same number."""

    source: StreamingSource
    reader: DatasetReader
    vocab: Any
    config: DataLoaderConfig
    world: World = SINGLE
    seed: int = 0
    epoch: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        config = self.config
        budget = config.max_instances_in_memory or config.batch_size * DEFAULT_CHUNK_BATCHES
        self.chunk_size = max(config.batch_size, budget // config.batch_size * config.batch_size)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        """Steps per epoch if shares are even (exact for the global count, approximate per rank)."""
        return max(1, math.ceil(self.source.num_instances / (self.config.batch_size * self.world.dp_size)))

    def batches_for(self, worker: int, workers: int) -> Iterator[tuple[dict[str, Any], int]]:
        shard = ReaderShard(self.world.dp_rank, self.world.dp_size, worker, workers)
        return stream_batches(
            self.reader, self.source.path, shard, self.vocab, self.config.batch_size,
            self.chunk_size, self.config.shuffle, self.seed, self.epoch,
        )

    def _local(self) -> Iterator[tuple[dict[str, Any], int]]:
        if self.config.num_workers <= 0:
            yield from self.batches_for(0, 1)
            return
        import multiprocessing

        # Fork starts a loader process in milliseconds; CUDA cannot survive a fork, so spawn there.
        fork = "fork" in multiprocessing.get_all_start_methods() and not self.world.device.startswith("cuda")
        processes = torch.utils.data.DataLoader(
            _ShareOfRank(self), batch_size=None, num_workers=self.config.num_workers, collate_fn=_as_is,
            multiprocessing_context="fork" if fork else "spawn",
        )
        for item in processes:
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
                raise DataError(item[1])
            yield item

    def __iter__(self) -> Iterator[Batch]:
        from distrain.distributed.collectives import all_reduce_sum

        local = self._local()
        placeholder = None
        empty = np.zeros(0, dtype=np.int64)
        while True:
            beat()  # progress, for the hang watchdog
            item = next(local, None)
            size = 0 if item is None else item[1]
            totals = all_reduce_sum(torch.tensor([size, int(item is not None)], dtype=torch.int64))
            if int(totals[1]) == 0:
                return
            if item is None:
                if placeholder is None:
                    placeholder = self._placeholder()
                yield Batch(placeholder, 0, int(totals[0]), empty)
            else:
                placeholder = item[0]
                yield Batch(item[0], size, int(totals[0]), np.full(size, -1, dtype=np.int64))

    def _placeholder(self) -> dict[str, Any]:
        """Inputs of the right shape for a rank that holds no data at all (it carries zero weight)."""
        from distrain.data.dataset import IndexedDataset

        previous = self.reader.shard
        self.reader.set_shard(WHOLE)
        try:
            first = next(iter(self.reader.read(self.source.path)))
        finally:
            self.reader.set_shard(previous)
        return IndexedDataset.from_instances([first], self.vocab).batch(np.zeros(1, dtype=np.int64))
