"""``allennlp.data.token_indexers.pretrained_transformer_mismatched_indexer``."""

from distrain.data.token_indexers.pretrained_transformer_mismatched import PretrainedTransformerMismatchedIndexer

__all__ = [
    "PretrainedTransformerMismatchedIndexer",
]
