"""``allennlp.data.fields.multilabel_field``: distrain's multi-label field with AllenNLP's field API."""

from __future__ import annotations

from distrain.allennlp.data.fields.field import Field
from distrain.data.label_fields import MultiLabelField as DistrainMultiLabelField

__all__ = ["MultiLabelField"]


class MultiLabelField(DistrainMultiLabelField, Field):
    flatten = None  # distrain's own protocol indexes it

    def empty_field(self) -> MultiLabelField:
        return MultiLabelField([], self._label_namespace, skip_indexing=True, num_labels=self._num_labels or 0)

    def __str__(self) -> str:
        return f"MultiLabelField with labels: {self.labels} in namespace: '{self._label_namespace}'."
