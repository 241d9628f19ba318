"""``allennlp.modules.feedforward``."""

from distrain.modules.feedforward import FeedForward

__all__ = [
    "FeedForward",
]
