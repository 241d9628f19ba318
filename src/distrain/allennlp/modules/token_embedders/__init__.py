"""``allennlp.modules.token_embedders``: one indexer's ids to vectors."""

from distrain.modules.token_embedder import TokenEmbedder
from distrain.modules.token_embedders.bag_of_word_counts import BagOfWordCountsTokenEmbedder
from distrain.modules.token_embedders.character_encoding import TokenCharactersEncoder
from distrain.modules.token_embedders.elmo import ElmoTokenEmbedder
from distrain.allennlp.modules.token_embedders.embedding import Embedding
from distrain.modules.token_embedders.empty import EmptyEmbedder
from distrain.modules.token_embedders.pass_through import PassThroughTokenEmbedder
from distrain.modules.token_embedders.pretrained_transformer import PretrainedTransformerEmbedder
from distrain.modules.token_embedders.pretrained_transformer_mismatched import PretrainedTransformerMismatchedEmbedder

__all__ = [
    "BagOfWordCountsTokenEmbedder", "ElmoTokenEmbedder", "Embedding", "EmptyEmbedder", "PassThroughTokenEmbedder",
    "PretrainedTransformerEmbedder", "PretrainedTransformerMismatchedEmbedder", "TokenCharactersEncoder",
    "TokenEmbedder",
]
