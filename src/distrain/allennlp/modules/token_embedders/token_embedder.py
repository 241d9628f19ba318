"""``allennlp.modules.token_embedders.token_embedder``."""

from distrain.modules.token_embedder import TokenEmbedder

__all__ = [
    "TokenEmbedder",
]
