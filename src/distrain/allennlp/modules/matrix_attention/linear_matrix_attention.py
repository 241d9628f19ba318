"""``allennlp.modules.matrix_attention.linear_matrix_attention``."""

from distrain.modules.matrix_attentions.linear import LinearMatrixAttention

__all__ = [
    "LinearMatrixAttention",
]
