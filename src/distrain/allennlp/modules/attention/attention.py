"""``allennlp.modules.attention.attention``: the attention base."""

from distrain.modules.attention import Attention

__all__ = [
    "Attention",
]
