"""``allennlp.data.fields.flag_field``: distrain's flag field with AllenNLP's field API."""

from __future__ import annotations

from distrain.allennlp.data.fields.field import Field
from distrain.data.label_fields import FlagField as DistrainFlagField

__all__ = ["FlagField"]


class FlagField(DistrainFlagField, Field):
    flatten = None  # distrain's own protocol indexes it

    def empty_field(self) -> FlagField:
        return FlagField(self.flag_value)

    def __len__(self) -> int:
        return 1

    def __str__(self) -> str:
        return f"FlagField({self.flag_value})"
