"""``allennlp.data.fields.sequence_label_field``: distrain's sequence label field with AllenNLP's checks and
field API (labels as strings to index, or as int ids kept as they are; padded with 0)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from distrain.allennlp.data.fields.field import Field, ItemSequence, padded_ids
from distrain.allennlp.data.fields.label_field import warn_once_about
from distrain.config.errors import ConfigError
from distrain.data.fields import SequenceLabelField as DistrainSequenceLabelField

__all__ = ["SequenceLabelField"]


class SequenceLabelField(ItemSequence, DistrainSequenceLabelField, Field):
    held = "labels"
    flatten = None  # distrain's own protocol indexes it

    _already_warned_namespaces: set[str] = set()

    def __init__(self, labels: Sequence[str | int], sequence_field: Any, label_namespace: str = "labels") -> None:
        if len(labels) != len(sequence_field):
            raise ConfigError(f"SequenceLabelField: {len(labels)} labels for a sequence of {len(sequence_field)}: "
                              f"{list(labels)}")
        if not all(isinstance(label, str) for label in labels) and \
                not all(isinstance(label, (int, np.integer)) for label in labels):
            raise ConfigError(f"SequenceLabelField: labels are all strings or all int ids, not {list(labels)}")
        super().__init__([str(label) for label in labels], sequence_field, label_namespace)
        self.labels = list(labels)
        self.sequence_field = sequence_field
        self._label_namespace = label_namespace
        self._indexed_labels: list[int] | None = None
        if labels and all(isinstance(label, (int, np.integer)) for label in labels):
            self._indexed_labels = [int(label) for label in labels]
        else:
            warn_once_about(SequenceLabelField, label_namespace)

    def count_vocab_items(self, counter: Any) -> None:
        if self._indexed_labels is None or not all(isinstance(label, (int, np.integer)) for label in self.labels):
            for label in self.labels:
                counter.setdefault(self.namespace, {})
                counter[self.namespace][label] = counter[self.namespace].get(label, 0) + 1

    def index(self, vocab: Any) -> np.ndarray:
        if self._indexed_labels is None or not all(isinstance(label, (int, np.integer)) for label in self.labels):
            self._indexed_labels = [vocab.label_index(label, self.namespace) for label in self.labels]
        return np.asarray(self._indexed_labels, dtype=np.int64)

    def get_padding_lengths(self) -> dict[str, int]:
        return {"num_tokens": len(self.labels)}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        if self._indexed_labels is None:
            raise ConfigError("a SequenceLabelField must be indexed (field.index(vocab)) before it becomes a tensor")
        return padded_ids(self._indexed_labels, padding_lengths["num_tokens"])

    def empty_field(self) -> SequenceLabelField:
        sequence = self.sequence_field.empty_field() if hasattr(self.sequence_field, "empty_field") else []
        empty = SequenceLabelField([], sequence, self._label_namespace)
        empty._indexed_labels = []
        return empty

    def human_readable_repr(self) -> list[Any]:
        return list(self.labels)

    def __str__(self) -> str:
        return (f"SequenceLabelField of length {len(self.labels)} with labels: {self.labels} in namespace: "
                f"'{self._label_namespace}'.")
