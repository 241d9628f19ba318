"""``allennlp.data.token_indexers``: tokens to ids, by indexer."""

from distrain.data.token_indexer import TokenIndexer
from distrain.allennlp.data.token_indexers.token_characters_indexer import TokenCharactersIndexer
from distrain.data.token_indexers.elmo_characters import ELMoTokenCharactersIndexer
from distrain.data.token_indexers.pretrained_transformer import PretrainedTransformerIndexer
from distrain.data.token_indexers.pretrained_transformer_mismatched import PretrainedTransformerMismatchedIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer

__all__ = [
    "ELMoTokenCharactersIndexer", "PretrainedTransformerIndexer", "PretrainedTransformerMismatchedIndexer",
    "SingleIdTokenIndexer", "TokenCharactersIndexer", "TokenIndexer",
]
