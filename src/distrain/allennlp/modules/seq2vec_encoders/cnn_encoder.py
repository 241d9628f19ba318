"""``allennlp.modules.seq2vec_encoders.cnn_encoder``."""

from distrain.modules.seq2vec_encoders.cnn import CnnEncoder

__all__ = [
    "CnnEncoder",
]
