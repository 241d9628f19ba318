"""``allennlp.data.token_indexers.single_id_token_indexer``."""

from distrain.data.token_indexers.single_id import SingleIdTokenIndexer

__all__ = [
    "SingleIdTokenIndexer",
]
