"""``allennlp.data.instance``."""

from distrain.data.fields import Instance

__all__ = [
    "Instance",
]
