"""``allennlp.data.data_loaders.multitask_data_loader``: batches of several datasets' instances, each read by its
own reader of a :class:`~distrain.allennlp.data.dataset_readers.multitask.MultiTaskDatasetReader`. An epoch takes
``instances_per_epoch`` instances (all of every dataset when not given), shared among the datasets by ``sampler``
(each dataset read on from where the last epoch stopped, starting over when it runs out), and ``scheduler`` cuts
them into batches."""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping

from distrain.allennlp.data.data_loaders.data_loader import DataLoader, TensorDict, allennlp_collate, moved
from distrain.allennlp.data.data_loaders.multitask_epoch_sampler import MultiTaskEpochSampler, UniformSampler
from distrain.allennlp.data.data_loaders.multitask_scheduler import MultiTaskScheduler, RoundRobinScheduler
from distrain.allennlp.data.instance import as_instance

__all__ = ["MultiTaskDataLoader"]


class MultiTaskDataLoader(DataLoader):
    def __init__(self, reader: Any, data_path: Mapping[str, str], scheduler: MultiTaskScheduler | None = None, *,
                 sampler: MultiTaskEpochSampler | None = None, instances_per_epoch: int | None = None,
                 num_workers: Mapping[str, int] | None = None, max_instances_in_memory: Mapping[str, int] | None = None,
                 start_method: Mapping[str, str] | None = None, instance_queue_size: Mapping[str, int] | None = None,
                 instance_chunk_size: Mapping[str, int] | None = None, shuffle: bool = True,
                 cuda_device: Any = None) -> None:
        if set(data_path) != set(reader.readers):
            raise ValueError(f"MultiTaskDataLoader: the data paths name {sorted(data_path)}, the readers "
                             f"{sorted(reader.readers)}")
        self.readers, self.data_path = reader.readers, dict(data_path)
        self.scheduler = scheduler or RoundRobinScheduler(batch_size=32)
        self.sampler = sampler or UniformSampler()
        self.instances_per_epoch = instances_per_epoch
        self.cuda_device = cuda_device
        self._vocab: Any = None
        self._streams: dict[str, Iterator[Any]] = {}

    def _stream(self, name: str) -> Iterator[Any]:
        while True:
            empty = True
            for instance in self.readers[name].read(self.data_path[name]):
                empty = False
                instance = as_instance(instance)
                if self._vocab is not None:
                    instance.index_fields(self._vocab)
                yield instance
            if empty:
                return

    def _epoch(self) -> dict[str, list[Any]]:
        if self.instances_per_epoch is None:
            return {name: [as_instance(i) for i in self.readers[name].read(path)] for name, path in self.data_path.items()}
        shares = self.sampler.get_task_proportions(self.readers)
        epoch = {}
        for name in self.data_path:
            stream = self._streams.setdefault(name, self._stream(name))
            count = math.floor(shares[name] * self.instances_per_epoch)
            epoch[name] = [instance for _, instance in zip(range(count), stream)]
        return epoch

    def iter_instances(self) -> Iterator[Any]:
        for instances in self._epoch().values():
            yield from instances

    def __iter__(self) -> Iterator[TensorDict]:
        epoch = self._epoch()
        if self._vocab is not None:
            for instances in epoch.values():
                for instance in instances:
                    instance.index_fields(self._vocab)
        for batch in self.scheduler.batch_instances(epoch):
            yield moved(allennlp_collate(list(batch)), self.cuda_device)

    def index_with(self, vocab: Any) -> None:
        self._vocab = vocab

    def set_target_device(self, device: Any) -> None:
        self.cuda_device = device
