"""AllenNLP's ``Batch``: instances indexed and padded together into the tensors a model's ``forward`` takes.

With fields that answer AllenNLP's field API (the ``allennlp`` fields, a user's own) it pads as AllenNLP did: each
field to the batch's largest padding lengths (or to the ``padding_lengths`` given), then stacked by the field's
``batch_tensors``. With distrain's own fields, which only index into columns, it is the batch distrain's loader makes
of the same instances (each dimension padded to the batch's longest).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Iterator

import numpy as np

from distrain.config.errors import ConfigError

__all__ = ["Batch"]


class Batch:
    def __init__(self, instances: Iterable[dict]) -> None:
        self.instances = list(instances)
        self.vocab: Any = None
        names = {frozenset(instance) for instance in self.instances}
        if len(names) > 1:
            raise ConfigError(f"the instances of a Batch must have the same fields; these have "
                              f"{sorted(sorted(each) for each in names)}")

    def index_instances(self, vocab: Any) -> None:
        self.vocab = vocab
        for instance in self.instances:
            if hasattr(instance, "index_fields"):
                instance.index_fields(vocab)
            else:
                for field in instance.values():
                    if hasattr(field, "as_tensor"):
                        field.index(vocab)

    def _field_by_field(self) -> bool:
        return bool(self.instances) and all(
            all(hasattr(field, method) for method in ("get_padding_lengths", "as_tensor", "batch_tensors"))
            for field in self.instances[0].values())

    def get_padding_lengths(self) -> dict[str, dict[str, int]]:
        """Each field's padding lengths, the largest over the batch."""
        lengths: dict[str, dict[str, int]] = defaultdict(dict)
        for instance in self.instances:
            for name, field in instance.items():
                for key, length in field.get_padding_lengths().items():
                    lengths[name][key] = max(lengths[name].get(key, 0), length)
        return {name: dict(lengths.get(name, {})) for name in (self.instances[0] if self.instances else {})}

    def as_tensor_dict(self, padding_lengths: dict[str, dict[str, int]] | None = None,
                       verbose: bool = False) -> dict[str, Any]:
        if not self._field_by_field():
            from distrain.data.dataset import IndexedDataset
            from distrain.data.vocabulary import Vocabulary

            if padding_lengths:
                raise ValueError("Batch.as_tensor_dict: distrain's own fields pad to the batch's lengths; "
                                 "padding_lengths needs fields with AllenNLP's field API")
            dataset = IndexedDataset.from_instances(self.instances, self.vocab or Vocabulary())
            return dataset.batch(np.arange(len(self.instances)))
        lengths = self.get_padding_lengths()
        for name, given in (padding_lengths or {}).items():
            lengths.setdefault(name, {}).update(given)
        first = self.instances[0]
        tensors: dict[str, list[Any]] = {name: [] for name in first}
        for instance in self.instances:
            for name, field in instance.items():
                tensors[name].append(field.as_tensor(lengths[name]))
        return {name: first[name].batch_tensors(tensors[name]) for name in first}

    def print_statistics(self) -> None:
        print(f"Batch of {len(self.instances)} instances; padding lengths: {self.get_padding_lengths()}")

    def __iter__(self) -> Iterator[dict]:
        return iter(self.instances)

    def __len__(self) -> int:
        return len(self.instances)
