"""``allennlp.data.fields.span_field``."""

from distrain.data.label_fields import SpanField

__all__ = ["SpanField"]
