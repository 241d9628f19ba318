"""``allennlp.modules.attention.additive_attention``."""

from distrain.modules.attentions.additive import AdditiveAttention

__all__ = [
    "AdditiveAttention",
]
