"""``allennlp.modules.seq2vec_encoders.boe_encoder``."""

from distrain.modules.seq2vec_encoders.bag_of_embeddings import BagOfEmbeddingsEncoder

__all__ = [
    "BagOfEmbeddingsEncoder",
]
