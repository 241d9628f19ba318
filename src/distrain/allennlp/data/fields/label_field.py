"""``allennlp.data.fields.label_field``."""

from distrain.data.fields import LabelField

__all__ = [
    "LabelField",
]
