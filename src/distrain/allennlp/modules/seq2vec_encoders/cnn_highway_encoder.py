"""``allennlp.modules.seq2vec_encoders.cnn_highway_encoder``."""

from distrain.modules.seq2vec_encoders.cnn_highway import CnnHighwayEncoder

__all__ = [
    "CnnHighwayEncoder",
]
