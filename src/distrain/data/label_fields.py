"""Three more field kinds AllenNLP readers build: ``MultiLabelField`` (a set of labels as one multi-hot vector),
``SpanField`` (inclusive start and end in a sequence field) and ``FlagField`` (one value shared by a batch).

Each follows distrain's field protocol (``count_vocab_items``, ``index`` giving the column's array, a column
kind) and also answers AllenNLP's (``get_padding_lengths``, ``as_tensor``, ``empty_field``), so a reader or a test
written for AllenNLP can use either.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any, Sequence

import numpy as np
import torch

from distrain.data.fields import Field
from distrain.errors import ConfigError

logger = logging.getLogger(__name__)


class MultiLabelField(Field):
    """Labels (strings indexed into ``label_namespace``, or ints with ``skip_indexing`` and ``num_labels``) as a
    vector with 1 at each label's index: ``(num_labels,)``, the namespace's size when indexed."""

    column_kind = "fixed"
    #: the namespaces already warned about (one warning each per process)
    _already_warned_namespaces: set[str] = set()

    def __init__(self, labels: Sequence[str | int], label_namespace: str = "labels", skip_indexing: bool = False,
                 num_labels: int | None = None) -> None:
        if not label_namespace.endswith(("labels", "tags")) and label_namespace not in self._already_warned_namespaces:
            logger.warning("namespace %r of a MultiLabelField does not end in 'labels' or 'tags': it will get "
                           "padding and OOV entries", label_namespace)
            self._already_warned_namespaces.add(label_namespace)
        if skip_indexing:
            if not all(isinstance(label, int) for label in labels):
                raise ConfigError(f"MultiLabelField: with skip_indexing the labels are ints, not {list(labels)}")
            if num_labels is None:
                raise ConfigError("MultiLabelField: skip_indexing needs num_labels")
            if any(label >= num_labels or label < 0 for label in labels):
                raise ConfigError(f"MultiLabelField: labels {list(labels)} are not all in [0, {num_labels})")
        elif not all(isinstance(label, str) for label in labels):
            raise ConfigError(f"MultiLabelField: labels are strings (or ints with skip_indexing), not {list(labels)}")
        self.labels = list(labels)
        self._label_namespace = label_namespace
        self._label_ids: list[int] | None = list(labels) if skip_indexing else None
        self._num_labels = num_labels

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        if self._label_ids is None:
            counter = counters.setdefault(self._label_namespace, Counter())
            for label in self.labels:
                counter[label] += 1

    def index(self, vocab: Any) -> np.ndarray:
        if self._label_ids is None or self._num_labels is None:
            self._label_ids = [vocab.get_token_index(label, self._label_namespace) for label in self.labels] \
                if self._label_ids is None else self._label_ids
            self._num_labels = vocab.get_vocab_size(self._label_namespace)
        return self._multi_hot()

    def _multi_hot(self) -> np.ndarray:
        vector = np.zeros(self._num_labels or 0, dtype=np.int64)
        vector[self._label_ids or []] = 1
        return vector

    def get_padding_lengths(self) -> dict[str, int]:
        return {}

    def as_tensor(self, padding_lengths: dict[str, int]) -> torch.Tensor:
        return torch.from_numpy(self._multi_hot())

    def human_readable_repr(self) -> list[str | int]:
        return self.labels

    def empty_field(self) -> MultiLabelField:
        empty = MultiLabelField([], self._label_namespace, skip_indexing=True, num_labels=self._num_labels or 0)
        return empty

    def __len__(self) -> int:
        return 1


class SpanField(Field):
    """An inclusive ``(span_start, span_end)`` in ``sequence_field``; ``(-1, -1)`` stands for a missing one."""

    column_kind = "fixed"
    empty_value = -1

    def __init__(self, span_start: int, span_end: int, sequence_field: Any) -> None:
        if not isinstance(span_start, int) or not isinstance(span_end, int):
            raise TypeError(f"SpanField: start and end are ints, not {span_start!r} and {span_end!r}")
        if span_start > span_end:
            raise ValueError(f"SpanField: start {span_start} is after end {span_end}")
        if span_end > len(sequence_field) - 1:
            raise ValueError(f"SpanField: end {span_end} is outside a sequence of {len(sequence_field)}")
        self.span_start, self.span_end = span_start, span_end
        self.sequence_field = sequence_field

    def index(self, vocab: Any) -> np.ndarray:
        return np.asarray([self.span_start, self.span_end], dtype=np.int64)

    def get_padding_lengths(self) -> dict[str, int]:
        return {}

    def as_tensor(self, padding_lengths: dict[str, int]) -> torch.Tensor:
        return torch.tensor([self.span_start, self.span_end], dtype=torch.long)

    def human_readable_repr(self) -> tuple[int, int]:
        return self.span_start, self.span_end

    def __eq__(self, other: object) -> bool:
        """Equal to its ``(start, end)`` tuple, and to a span of the same sequence field with the same ends."""
        if isinstance(other, tuple):
            return other == (self.span_start, self.span_end)
        if isinstance(other, SpanField):
            return ((self.span_start, self.span_end) == (other.span_start, other.span_end)
                    and self.sequence_field is other.sequence_field)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.span_start, self.span_end))

    def empty_field(self) -> SpanField:
        return SpanField(-1, -1, self.sequence_field.empty_field() if hasattr(self.sequence_field, "empty_field")
                         else self.sequence_field)

    def __len__(self) -> int:
        return 2


class FlagField(Field):
    """One value for the whole batch (a model's mode, a task name): every instance of a batch must agree."""

    column_kind = "object"

    def __init__(self, flag_value: Any) -> None:
        self.flag_value = flag_value

    def index(self, vocab: Any) -> Any:
        return self.flag_value

    def get_padding_lengths(self) -> dict[str, int]:
        return {}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        return self.flag_value

    def human_readable_repr(self) -> Any:
        return self.flag_value

    def empty_field(self) -> FlagField:
        return FlagField(self.flag_value)

    def batch_tensors(self, tensor_list: list[Any]) -> Any:
        if len(set(map(repr, tensor_list))) != 1:
            raise ValueError(f"FlagField: the batch's values differ: {tensor_list}")
        return tensor_list[0]
