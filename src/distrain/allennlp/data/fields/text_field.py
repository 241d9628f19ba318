"""``allennlp.data.fields.text_field``."""

from distrain.data.fields import TextField

__all__ = [
    "TextField",
]
