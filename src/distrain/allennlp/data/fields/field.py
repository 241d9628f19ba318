"""``allennlp.data.fields.field``."""

from distrain.data.fields import Field

__all__ = [
    "Field",
]
