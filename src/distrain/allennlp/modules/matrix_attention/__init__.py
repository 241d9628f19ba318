"""``allennlp.modules.matrix_attention``: every row of one matrix against every row of another, by kind."""

from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.matrix_attentions.bilinear import BilinearMatrixAttention
from distrain.modules.matrix_attentions.cosine import CosineMatrixAttention
from distrain.modules.matrix_attentions.dot_product import DotProductMatrixAttention, ScaledDotProductMatrixAttention
from distrain.modules.matrix_attentions.linear import LinearMatrixAttention

__all__ = [
    "BilinearMatrixAttention", "CosineMatrixAttention", "DotProductMatrixAttention", "LinearMatrixAttention",
    "MatrixAttention", "ScaledDotProductMatrixAttention",
]
