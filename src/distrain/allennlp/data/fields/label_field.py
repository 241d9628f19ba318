"""``allennlp.data.fields.label_field``: distrain's label field with AllenNLP's checks and field API."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from distrain.allennlp.data.fields.field import Field
from distrain.config.errors import ConfigError
from distrain.data.fields import LabelField as DistrainLabelField

__all__ = ["LabelField"]

logger = logging.getLogger(__name__)


def warn_once_about(field_class: Any, namespace: str) -> None:
    """AllenNLP's warning, once per namespace, that a label namespace not ending in ``labels`` or ``tags`` will get
    padding and OOV entries."""
    if namespace.endswith(("labels", "tags")) or namespace in field_class._already_warned_namespaces:
        return
    logger.warning("Your label namespace was '%s'. We recommend you use a namespace ending with 'labels' or 'tags', "
                   "so we don't add UNK and PAD tokens by default to your vocabulary.", namespace)
    field_class._already_warned_namespaces.add(namespace)


class LabelField(DistrainLabelField, Field):
    flatten = None  # distrain's own protocol indexes it

    _already_warned_namespaces: set[str] = set()

    def __init__(self, label: str | int, label_namespace: str = "labels", skip_indexing: bool = False) -> None:
        if not skip_indexing and not isinstance(label, (str, int, np.integer)):
            raise ConfigError(f"LabelField: a label is a string, or an int id with skip_indexing; not {label!r}")
        super().__init__(label, label_namespace, skip_indexing)
        if isinstance(label, (int, np.integer)) and not skip_indexing:
            self._label_id = int(label)  # AllenNLP: an int label is already its id
        else:
            warn_once_about(LabelField, self.namespace)

    @property
    def _label_namespace(self) -> str:
        return self.namespace

    def count_vocab_items(self, counter: Any) -> None:
        if self._label_id is None or not isinstance(self.label, (int, np.integer)):
            super().count_vocab_items(counter)

    def index(self, vocab: Any) -> np.int64:
        if isinstance(self.label, (int, np.integer)):
            self._label_id = int(self.label)
            return np.int64(self._label_id)
        return super().index(vocab)

    def empty_field(self) -> LabelField:
        return LabelField(-1, self.namespace, skip_indexing=True)

    def __len__(self) -> int:
        return 1

    def __str__(self) -> str:
        return f"LabelField with label: {self.label} in namespace: '{self.namespace}'."
