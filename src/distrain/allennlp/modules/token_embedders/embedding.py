"""``allennlp.modules.token_embedders.embedding``."""

from distrain.modules.token_embedders.embedding import Embedding

__all__ = [
    "Embedding",
]
