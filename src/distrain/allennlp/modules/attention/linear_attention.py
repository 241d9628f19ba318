"""``allennlp.modules.attention.linear_attention``."""

from distrain.modules.attentions.linear import LinearAttention

__all__ = [
    "LinearAttention",
]
