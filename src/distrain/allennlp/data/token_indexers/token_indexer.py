"""``allennlp.data.token_indexers.token_indexer``."""

from distrain.data.token_indexer import TokenIndexer

__all__ = [
    "TokenIndexer",
]
