"""``allennlp.modules.attention.bilinear_attention``."""

from distrain.modules.attentions.bilinear import BilinearAttention

__all__ = [
    "BilinearAttention",
]
