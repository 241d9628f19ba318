"""``allennlp.data.fields.list_field``."""

from distrain.data.fields import ListField

__all__ = [
    "ListField",
]
