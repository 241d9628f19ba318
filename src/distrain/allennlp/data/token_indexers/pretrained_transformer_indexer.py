"""``allennlp.data.token_indexers.pretrained_transformer_indexer``."""

from distrain.data.token_indexers.pretrained_transformer import PretrainedTransformerIndexer

__all__ = [
    "PretrainedTransformerIndexer",
]
