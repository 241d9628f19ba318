"""``allennlp.data``: readers, instances, fields, tokenizers, indexers and the vocabulary, under AllenNLP's names."""

from distrain.allennlp.data.batch import Batch
from distrain.data.fields import Field, Instance
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.data.vocabulary import Vocabulary
from distrain.modules.text_field_embedder import TextFieldTensors

__all__ = ["Batch", "DatasetReader", "Field", "Instance", "TextFieldTensors", "Token", "TokenIndexer", "Tokenizer",
           "Vocabulary"]
