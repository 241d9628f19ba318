"""``allennlp.modules.attention``: a vector's attention over a matrix's rows, by kind."""

from distrain.modules.attention import Attention
from distrain.modules.attentions.additive import AdditiveAttention
from distrain.modules.attentions.bilinear import BilinearAttention
from distrain.modules.attentions.cosine import CosineAttention
from distrain.modules.attentions.dot_product import DotProductAttention, ScaledDotProductAttention
from distrain.modules.attentions.linear import LinearAttention

__all__ = [
    "AdditiveAttention", "Attention", "BilinearAttention", "CosineAttention", "DotProductAttention",
    "LinearAttention", "ScaledDotProductAttention",
]
