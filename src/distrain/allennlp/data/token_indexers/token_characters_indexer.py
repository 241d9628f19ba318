"""``allennlp.data.token_indexers.token_characters_indexer``."""

from distrain.data.token_indexers.characters import TokenCharactersIndexer

__all__ = [
    "TokenCharactersIndexer",
]
