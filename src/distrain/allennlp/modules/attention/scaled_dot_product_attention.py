"""``allennlp.modules.attention.scaled_dot_product_attention``."""

from distrain.modules.attentions.dot_product import ScaledDotProductAttention

__all__ = [
    "ScaledDotProductAttention",
]
