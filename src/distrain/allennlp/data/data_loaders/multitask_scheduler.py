"""``allennlp.data.data_loaders.multitask_scheduler``: how a multi-task epoch's instances of several datasets are
cut into batches. ``RoundRobinScheduler`` takes one instance of each dataset in turn and cuts the stream into
batches of ``batch_size``; ``HomogeneousRoundRobinScheduler`` cuts each dataset into batches of its own size
(``batch_size``: one for all, or one per dataset) and takes one batch of each in turn, so no batch mixes datasets."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

__all__ = ["HomogeneousRoundRobinScheduler", "MultiTaskScheduler", "RoundRobinScheduler"]


def round_robin(streams: Iterable[Iterable[Any]]) -> Iterator[Any]:
    """One item of each stream in turn, the exhausted ones dropping out."""
    live = [iter(stream) for stream in streams]
    while live:
        still = []
        for stream in live:
            for item in stream:
                yield item
                still.append(stream)
                break
        live = still


def batches_of(items: Iterable[Any], size: int, drop_last: bool) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


class MultiTaskScheduler:
    def batch_instances(self, epoch_instances: Mapping[str, Iterable[Any]]) -> Iterable[list[Any]]:
        raise NotImplementedError

    def count_batches(self, dataset_counts: Mapping[str, int]) -> int:
        raise NotImplementedError


class RoundRobinScheduler(MultiTaskScheduler):
    def __init__(self, batch_size: int, drop_last: bool = False) -> None:
        self.batch_size, self.drop_last = batch_size, drop_last

    def batch_instances(self, epoch_instances: Mapping[str, Iterable[Any]]) -> Iterable[list[Any]]:
        return batches_of(round_robin(epoch_instances.values()), self.batch_size, self.drop_last)

    def count_batches(self, dataset_counts: Mapping[str, int]) -> int:
        total = sum(dataset_counts.values())
        return total // self.batch_size if self.drop_last else -(-total // self.batch_size)


class HomogeneousRoundRobinScheduler(MultiTaskScheduler):
    def __init__(self, batch_size: int | Mapping[str, int], drop_last: bool = False) -> None:
        self.batch_size, self.drop_last = batch_size, drop_last

    def _size(self, dataset: str) -> int:
        return self.batch_size[dataset] if isinstance(self.batch_size, Mapping) else self.batch_size

    def batch_instances(self, epoch_instances: Mapping[str, Iterable[Any]]) -> Iterable[list[Any]]:
        return round_robin(batches_of(instances, self._size(dataset), self.drop_last)
                           for dataset, instances in epoch_instances.items())

    def count_batches(self, dataset_counts: Mapping[str, int]) -> int:
        size = self._size
        return sum(count // size(dataset) if self.drop_last else -(-count // size(dataset))
                   for dataset, count in dataset_counts.items())
