"""``allennlp.modules.attention.cosine_attention``."""

from distrain.modules.attentions.cosine import CosineAttention

__all__ = [
    "CosineAttention",
]
