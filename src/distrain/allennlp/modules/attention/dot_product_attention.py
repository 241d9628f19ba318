"""``allennlp.modules.attention.dot_product_attention``."""

from distrain.modules.attentions.dot_product import DotProductAttention

__all__ = [
    "DotProductAttention",
]
