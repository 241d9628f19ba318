"""``allennlp.data.fields.index_field``."""

from distrain.data.fields import IndexField

__all__ = [
    "IndexField",
]
