"""``allennlp.data.data_loaders.multiprocess_data_loader``: AllenNLP's loader of a reader's instances, by batch size
or batch sampler.

AllenNLP read in ``num_workers`` worker processes; here each worker's share is read in turn in this process with the
reader's :class:`~distrain.allennlp.data.dataset_readers.dataset_reader.WorkerInfo` set, so a reader that shards
itself gives the same instances, and the AllenNLP rule holds that such a reader leaves its text fields' indexers to
``apply_token_indexers`` (else :class:`WorkerError`). distrain's own training reads through its cached dataset and
never uses this class (its ``data_loader.num_workers`` are real processes).
"""

from __future__ import annotations

import random
from typing import Any, Iterable, Iterator

from distrain.allennlp.data.data_loaders.data_loader import (DataLoader, DefaultDataCollator, TensorDict,
                                                              count_batches, moved)
from distrain.allennlp.data.instance import as_instance

__all__ = ["MultiProcessDataLoader", "WorkerError"]


class WorkerError(Exception):
    """An error raised while a worker's share of the instances was read."""

    def __init__(self, original_err_repr: str, traceback: list[str] | None = None) -> None:
        super().__init__(f"worker raised {original_err_repr}" + ("\n" + "".join(traceback) if traceback else ""))


class MultiProcessDataLoader(DataLoader):
    def __init__(self, reader: Any, data_path: Any, *, batch_size: int | None = None, drop_last: bool = False,
                 shuffle: bool = False, batch_sampler: Any = None, batches_per_epoch: int | None = None,
                 num_workers: int = 0, max_instances_in_memory: int | None = None, start_method: str = "fork",
                 cuda_device: Any = None, quiet: bool = False, collate_fn: Any = DefaultDataCollator()) -> None:
        if num_workers is not None and num_workers < 0:
            raise ValueError("num_workers cannot be a negative number")
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if batch_sampler is not None and (batch_size is not None or drop_last or shuffle):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, drop_last and shuffle")
        if batch_sampler is None and batch_size is None:
            raise ValueError("batch_size is required when batch_sampler is not supplied")
        if batches_per_epoch is not None and batches_per_epoch < 1:
            raise ValueError("batches_per_epoch must be at least 1")
        if max_instances_in_memory is not None and max_instances_in_memory < max(batch_size or 1, 1):
            raise ValueError("max_instances_in_memory must be at least batch_size (and at least 1)")
        self.reader, self.data_path = reader, data_path
        self.batch_size, self.drop_last, self.shuffle = batch_size, drop_last, shuffle
        self.batch_sampler, self.batches_per_epoch = batch_sampler, batches_per_epoch
        self.num_workers, self.max_instances_in_memory = num_workers or 0, max_instances_in_memory
        self.start_method, self.quiet, self.collate_fn = start_method, quiet, collate_fn
        self.cuda_device: Any = None
        self.set_target_device(cuda_device)
        self._instances: list[Any] | None = None
        self._batch_generator: Iterator[TensorDict] | None = None
        self._vocab: Any = None
        if max_instances_in_memory is None:
            for _ in self.iter_instances():
                pass

    def index_with(self, vocab: Any) -> None:
        self._vocab = vocab
        for instance in self._instances or []:
            instance.index_fields(vocab)

    def __len__(self) -> int:
        if self.batches_per_epoch is not None:
            return self.batches_per_epoch
        if self.max_instances_in_memory is not None:
            raise TypeError("a loader holding max_instances_in_memory does not know its number of batches")
        if not self._instances:
            for _ in self.iter_instances():
                pass
        if self.batch_sampler is not None:
            return self.batch_sampler.get_num_batches(self._instances)
        return count_batches(len(self._instances), self.batch_size, self.drop_last)

    def __iter__(self) -> Iterator[TensorDict]:
        if self._vocab is None:
            raise ValueError("This DataLoader has not been indexed with a Vocabulary yet. "
                             "Did you forget to call DataLoader.index_with(vocab)?")
        if self.batches_per_epoch is None:
            yield from self._iter_batches()
            return
        batches = self._batch_generator or self._iter_batches()
        self._batch_generator = None
        for _ in range(self.batches_per_epoch):
            try:
                yield next(batches)
            except StopIteration:
                batches = self._iter_batches()
                yield next(batches)
        self._batch_generator = batches

    def iter_instances(self) -> Iterator[Any]:
        if self._instances:
            yield from self._instances
            return
        if self.max_instances_in_memory is None:
            self._instances = []
        for instance in self._read():
            if self.max_instances_in_memory is None:
                self._instances.append(instance)
            if self._vocab is not None:
                instance.index_fields(self._vocab)
            yield instance

    def _read(self) -> Iterator[Any]:
        apply = getattr(self.reader, "apply_token_indexers", lambda instance: None)
        if self.num_workers <= 0 or not hasattr(self.reader, "_set_worker_info"):  # distrain's readers: read once
            for instance in self.reader.read(self.data_path):
                instance = as_instance(instance)
                apply(instance)
                yield instance
            return
        from distrain.allennlp.data.dataset_readers.dataset_reader import WorkerInfo

        for worker in range(self.num_workers):
            self.reader._set_worker_info(WorkerInfo(self.num_workers, worker))
            try:
                for instance in self.reader.read(self.data_path):
                    instance = as_instance(instance)
                    _refuse_indexers_in_workers(instance)
                    apply(instance)
                    yield instance
            finally:
                self.reader._set_worker_info(None)

    def set_target_device(self, device: Any) -> None:
        import torch

        self.cuda_device = None if device is None else device if isinstance(device, torch.device) \
            else torch.device(device)

    def _iter_batches(self) -> Iterator[TensorDict]:
        instances = self.iter_instances()
        chunk = self.max_instances_in_memory
        groups = [list(instances)] if chunk is None else _chunks(instances, chunk)
        for group in groups:
            for indices in self._batch_indices(group):
                yield moved(self.collate_fn([group[index] for index in indices]), self.cuda_device)

    def _batch_indices(self, instances: list[Any]) -> Iterable[list[int]]:
        if self.batch_sampler is not None:
            return self.batch_sampler.get_batch_indices(instances)
        order = list(range(len(instances)))
        if self.shuffle:
            random.shuffle(order)
        batches = [order[start:start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        return [batch for batch in batches if not self.drop_last or len(batch) == self.batch_size]


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _refuse_indexers_in_workers(instance: Any) -> None:
    from distrain.allennlp.data.fields.text_field import TextField

    for field in instance.values():
        texts = [field] if isinstance(field, TextField) else getattr(field, "field_list", [])
        if any(isinstance(text, TextField) and text.indexers_given for text in texts):
            raise WorkerError("ValueError(\"TextFields must not have TokenIndexers when read in workers. Make sure "
                              "your dataset reader's text_to_instance() method doesn't add any TokenIndexers to the "
                              "TextFields it creates. Instead, the token indexers should be added to the instances "
                              "in the apply_token_indexers() method of your dataset reader\")")
