"""``allennlp.data.dataset_readers.dataset_reader``: distrain's reader base with AllenNLP's ``read``.

Inside distrain's pipeline (its parent reading a split, or each worker its shard) a reader reads as every distrain
reader does. Called directly, as AllenNLP's code and tests call it, ``read`` is AllenNLP's: the path goes to
``_read`` unchecked (it need not be a file), the instances are sliced by the ``torch.distributed`` rank and the
data-loader worker (:class:`WorkerInfo`) unless the reader shards itself (``manual_distributed_sharding``,
``manual_multiprocess_sharding``), ``max_instances`` is shared among those slices, ``apply_token_indexers`` runs
on each instance read in the main process, and a plain dict of fields becomes an :class:`Instance`.
"""

from __future__ import annotations

import itertools
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar

from distrain.data.reader import WHOLE, DataError
from distrain.data.reader import DatasetReader as DistrainDatasetReader

__all__ = ["DatasetReader", "DistributedInfo", "WorkerInfo"]

T = TypeVar("T")

logger = logging.getLogger(__name__)


@dataclass
class WorkerInfo:
    """The data-loader worker a reader runs in: ``num_workers`` of them, this one ``id``."""

    num_workers: int
    id: int


@dataclass
class DistributedInfo:
    """The ``torch.distributed`` group a reader runs in: ``world_size`` processes, this one ``global_rank``."""

    world_size: int
    global_rank: int


def _distributed_now() -> DistributedInfo | None:
    import torch.distributed as dist

    from distrain.allennlp.common import util

    return DistributedInfo(dist.get_world_size(), dist.get_rank()) if util.is_distributed() else None


def _share(total: int | None, index: int, count: int) -> int | None:
    """Slice ``index`` of ``count``'s part of ``total`` items (the first ones one more where it does not divide)."""
    if total is None:
        return None
    return total // count + (1 if index < total % count else 0)


class DatasetReader(DistrainDatasetReader):
    def __init__(self, max_instances: int | None = None, manual_distributed_sharding: bool = False,
                 manual_multiprocess_sharding: bool = False, serialization_dir: str | None = None,
                 skip_invalid: bool = False, lazy: bool = False) -> None:
        if max_instances is not None and max_instances < 0:
            raise ValueError("If specified, max_instances should be a positive int")
        super().__init__(max_instances=max_instances, manual_distributed_sharding=manual_distributed_sharding,
                         manual_multiprocess_sharding=manual_multiprocess_sharding,
                         serialization_dir=serialization_dir, skip_invalid=skip_invalid, lazy=lazy)
        self.manual_distributed_sharding = manual_distributed_sharding
        self.manual_multiprocess_sharding = manual_multiprocess_sharding
        self.serialization_dir = serialization_dir
        self._worker_info: WorkerInfo | None = None
        self._distributed_info: DistributedInfo | None = _distributed_now()

    def read(self, file_path: Any) -> Iterator[Any]:
        if self.shard is not WHOLE:  # distrain's pipeline: its own sharding
            for instance in super().read(file_path):
                instance = self._as_instance(instance)
                self.apply_token_indexers(instance)
                yield instance
            return
        self.num_skipped = 0
        try:
            for instance in self._multi_worker_islice(self._read(file_path)):
                instance = self._as_instance(instance)
                if self._worker_info is None:
                    self.apply_token_indexers(instance)
                yield instance
        except FileNotFoundError:
            if isinstance(file_path, (str, Path)) and not Path(file_path).exists():
                raise DataError(f"data file not found: {file_path}") from None
            raise
        if self.num_skipped:
            logger.warning("%s: skipped %d invalid record(s)", file_path, self.num_skipped)

    @staticmethod
    def _as_instance(instance: Any) -> Any:
        from distrain.allennlp.data.instance import as_instance

        return as_instance(instance)

    def apply_token_indexers(self, instance: Any) -> None:
        """Set the token indexers of the instance's text fields (a reader that leaves them out overrides this)."""

    def get_worker_info(self) -> WorkerInfo | None:
        return self._worker_info

    def get_distributed_info(self) -> DistributedInfo | None:
        return self._distributed_info

    def _set_worker_info(self, info: WorkerInfo | None) -> None:
        self._worker_info = info

    def _set_distributed_info(self, info: DistributedInfo | None) -> None:
        self._distributed_info = info

    def shard_iterable(self, iterable: Iterable[T]) -> Iterator[T]:
        if self.shard is not WHOLE:
            return super().shard_iterable(iterable)
        if not self.manual_distributed_sharding or not self.manual_multiprocess_sharding:
            raise ValueError("self.shard_iterable() was called but self.manual_distributed_sharding and "
                             "self.manual_multiprocess_sharding was not set to True. Did you forget to call "
                             "super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True) "
                             "in your constructor?")
        items: Iterator[T] = iter(iterable)
        distributed = _distributed_now()
        if distributed is not None:
            items = itertools.islice(items, distributed.global_rank, None, distributed.world_size)
        if self._worker_info is not None:
            items = itertools.islice(items, self._worker_info.id, None, self._worker_info.num_workers)
        if self.max_instances is not None:
            items = itertools.islice(items, self.max_instances)
        return items

    def _multi_worker_islice(self, iterable: Iterable[T]) -> Iterator[T]:
        items: Iterator[T] = iter(iterable)
        limit = self.max_instances
        if self._distributed_info is not None:
            limit = _share(limit, self._distributed_info.global_rank, self._distributed_info.world_size)
            if not self.manual_distributed_sharding:
                items = itertools.islice(items, self._distributed_info.global_rank, None,
                                         self._distributed_info.world_size)
        if self._worker_info is not None:
            limit = _share(limit, self._worker_info.id, self._worker_info.num_workers)
            if not self.manual_multiprocess_sharding:
                warnings.warn("Using multi-process data loading without setting "
                              "DatasetReader.manual_multiprocess_sharding to True: each worker reads every "
                              "instance and keeps its share", UserWarning)
                items = itertools.islice(items, self._worker_info.id, None, self._worker_info.num_workers)
        return itertools.islice(items, limit) if limit is not None else items
