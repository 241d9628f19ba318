"""``allennlp.data.fields.index_field``: distrain's index field with AllenNLP's field API."""

from __future__ import annotations

from distrain.allennlp.data.fields.field import Field
from distrain.data.fields import IndexField as DistrainIndexField

__all__ = ["IndexField"]


class IndexField(DistrainIndexField, Field):
    flatten = None  # distrain's own protocol indexes it

    def empty_field(self) -> IndexField:
        return IndexField(-1, self.sequence_field.empty_field()
                          if hasattr(self.sequence_field, "empty_field") else None)

    def __len__(self) -> int:
        return 1

    def __str__(self) -> str:
        return f"IndexField with index: {self.sequence_index}."
