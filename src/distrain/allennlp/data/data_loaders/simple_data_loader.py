"""``allennlp.data.data_loaders.simple_data_loader``: batches of a list of instances held in memory."""

from __future__ import annotations

import math
import random
from typing import Any, Iterator

from distrain.allennlp.data.instance import as_instance
from distrain.allennlp.data.data_loaders.data_loader import DataLoader, TensorDict, allennlp_collate, moved

__all__ = ["SimpleDataLoader"]


class SimpleDataLoader(DataLoader):
    """``batch_size`` instances at a time, in order or (``shuffle``) in a fresh order each epoch; with
    ``batches_per_epoch`` an epoch is that many batches, the next one going on where the last stopped."""

    def __init__(self, instances: list[Any], batch_size: int, *, shuffle: bool = False,
                 batches_per_epoch: int | None = None, vocab: Any = None) -> None:
        self.instances = [as_instance(instance) for instance in instances]
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.batches_per_epoch = batches_per_epoch
        self.vocab = vocab
        self.cuda_device: Any = None
        self._batch_generator: Iterator[TensorDict] | None = None
        if vocab is not None:
            self.index_with(vocab)

    def __len__(self) -> int:
        return self.batches_per_epoch if self.batches_per_epoch is not None else \
            math.ceil(len(self.instances) / self.batch_size)

    def __iter__(self) -> Iterator[TensorDict]:
        if self.batches_per_epoch is None:
            yield from self._iter_batches()
            return
        if self._batch_generator is None:
            self._batch_generator = self._endless()
        for _ in range(self.batches_per_epoch):
            yield next(self._batch_generator)

    def _endless(self) -> Iterator[TensorDict]:
        while True:
            yield from self._iter_batches()

    def _iter_batches(self) -> Iterator[TensorDict]:
        order = list(self.instances)
        if self.shuffle:
            random.shuffle(order)
        for start in range(0, len(order), self.batch_size):
            yield moved(allennlp_collate(order[start:start + self.batch_size]), self.cuda_device)

    def iter_instances(self) -> Iterator[Any]:
        for instance in self.instances:
            if self.vocab is not None:
                instance.index_fields(self.vocab)
            yield instance

    def index_with(self, vocab: Any) -> None:
        self.vocab = vocab
        for instance in self.instances:
            instance.index_fields(vocab)

    def set_target_device(self, device: Any) -> None:
        self.cuda_device = device

    @classmethod
    def from_dataset_reader(cls, reader: Any, data_path: str, batch_size: int, shuffle: bool = False,
                            batches_per_epoch: int | None = None, quiet: bool = False) -> SimpleDataLoader:
        return cls(list(reader.read(data_path)), batch_size, shuffle=shuffle, batches_per_epoch=batches_per_epoch)
