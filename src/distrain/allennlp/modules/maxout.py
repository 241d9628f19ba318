"""``allennlp.modules.maxout``."""

from distrain.modules.maxout import Maxout

__all__ = [
    "Maxout",
]
