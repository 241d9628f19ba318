"""``allennlp.data.data_loaders.data_loader``: AllenNLP's Python data-loader API and its collate function.

distrain's trainer never calls these: its loader is configured by the ``data_loader`` block and cuts global batches
from the cached dataset for every worker (:mod:`distrain.data.loader`). They serve code that drives a model by hand
as AllenNLP's scripts and tests do: instances in, ``TensorDict`` batches out, padded field by field by
:class:`~distrain.allennlp.data.batch.Batch`.
"""

from __future__ import annotations

from typing import Any, Iterator, Union

from distrain.allennlp.data.batch import Batch

__all__ = ["DataCollator", "DataLoader", "DefaultDataCollator", "TensorDict", "allennlp_collate"]

#: a batch as a model's ``forward`` takes it: tensors, text fields' nested ``{indexer: {name: tensor}}``
TensorDict = dict[str, Union[Any, dict[str, Any]]]


def allennlp_collate(instances: list[Any]) -> TensorDict:
    """One batch of ``instances`` (already indexed) as tensors."""
    return Batch(instances).as_tensor_dict()


class DataCollator:
    """Instances to one batch; AllenNLP's loaders take one as ``collate_fn``."""

    def __call__(self, instances: list[Any]) -> TensorDict:
        raise NotImplementedError


class DefaultDataCollator(DataCollator):
    def __call__(self, instances: list[Any]) -> TensorDict:
        return allennlp_collate(instances)


class DataLoader:
    """AllenNLP's base: iterate batches, iterate instances, index with a vocabulary, move batches to a device."""

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} does not know its number of batches")

    def __iter__(self) -> Iterator[TensorDict]:
        raise NotImplementedError

    def iter_instances(self) -> Iterator[Any]:
        raise NotImplementedError

    def index_with(self, vocab: Any) -> None:
        raise NotImplementedError

    def set_target_device(self, device: Any) -> None:
        raise NotImplementedError


def count_batches(count: int, batch_size: int, drop_last: bool) -> int:
    return count // batch_size if drop_last else -(-count // batch_size)


def moved(batch: Any, device: Any) -> Any:
    """``batch`` with every tensor in it on ``device`` (None: where it is)."""
    if device is None:
        return batch
    if hasattr(batch, "to"):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: moved(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(moved(value, device) for value in batch)
    return batch
