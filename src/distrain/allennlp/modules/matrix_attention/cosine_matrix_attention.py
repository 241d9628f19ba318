"""``allennlp.modules.matrix_attention.cosine_matrix_attention``."""

from distrain.modules.matrix_attentions.cosine import CosineMatrixAttention

__all__ = [
    "CosineMatrixAttention",
]
