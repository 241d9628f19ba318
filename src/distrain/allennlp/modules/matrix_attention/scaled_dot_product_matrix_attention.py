"""``allennlp.modules.matrix_attention.scaled_dot_product_matrix_attention``."""

from distrain.modules.matrix_attentions.dot_product import ScaledDotProductMatrixAttention

__all__ = [
    "ScaledDotProductMatrixAttention",
]
