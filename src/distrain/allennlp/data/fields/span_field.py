"""``allennlp.data.fields.span_field``: distrain's span field with AllenNLP's field API."""

from __future__ import annotations

from distrain.allennlp.data.fields.field import Field
from distrain.data.label_fields import SpanField as DistrainSpanField

__all__ = ["SpanField"]


class SpanField(DistrainSpanField, Field):
    flatten = None  # distrain's own protocol indexes it

    def empty_field(self) -> SpanField:
        return SpanField(-1, -1, self.sequence_field.empty_field()
                         if hasattr(self.sequence_field, "empty_field") else self.sequence_field)

    def __str__(self) -> str:
        return f"SpanField with spans: ({self.span_start}, {self.span_end})."
