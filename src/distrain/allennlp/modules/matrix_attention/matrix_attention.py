"""``allennlp.modules.matrix_attention.matrix_attention``: the base."""

from distrain.modules.matrix_attention import MatrixAttention

__all__ = [
    "MatrixAttention",
]
