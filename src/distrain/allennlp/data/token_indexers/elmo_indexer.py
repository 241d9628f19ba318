"""``allennlp.data.token_indexers.elmo_indexer``."""

from distrain.data.token_indexers.elmo_characters import ELMoTokenCharactersIndexer

__all__ = [
    "ELMoTokenCharactersIndexer",
]
