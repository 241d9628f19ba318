"""``allennlp.modules.matrix_attention.dot_product_matrix_attention``."""

from distrain.modules.matrix_attentions.dot_product import DotProductMatrixAttention

__all__ = [
    "DotProductMatrixAttention",
]
