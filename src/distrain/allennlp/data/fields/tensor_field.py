"""``allennlp.data.fields.tensor_field``."""

from distrain.data.fields import TensorField

__all__ = [
    "TensorField",
]
