"""``allennlp.modules.matrix_attention.bilinear_matrix_attention``."""

from distrain.modules.matrix_attentions.bilinear import BilinearMatrixAttention

__all__ = [
    "BilinearMatrixAttention",
]
