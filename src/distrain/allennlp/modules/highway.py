"""``allennlp.modules.highway``."""

from distrain.modules.highway import Highway

__all__ = [
    "Highway",
]
