"""``allennlp.data.fields.array_field``."""

from distrain.data.fields import ArrayField

__all__ = [
    "ArrayField",
]
