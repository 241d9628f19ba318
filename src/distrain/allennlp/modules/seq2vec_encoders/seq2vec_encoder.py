"""``allennlp.modules.seq2vec_encoders.seq2vec_encoder``."""

from distrain.modules.seq2vec_encoder import Seq2VecEncoder

__all__ = [
    "Seq2VecEncoder",
]
