"""``allennlp.data``: readers, instances, fields, tokenizers, indexers, loaders and the vocabulary, under AllenNLP's
names."""

from distrain.allennlp.data.batch import Batch
from distrain.allennlp.data.data_loaders import DataLoader, TensorDict, allennlp_collate
from distrain.allennlp.data.dataset_readers.dataset_reader import DatasetReader
from distrain.allennlp.data.fields import Field
from distrain.allennlp.data.instance import Instance
from distrain.allennlp.data.samplers import BatchSampler
from distrain.data.token_indexer import TokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.allennlp.data.vocabulary import Vocabulary
from distrain.modules.text_field_embedder import TextFieldTensors

__all__ = ["Batch", "BatchSampler", "DataLoader", "DatasetReader", "Field", "Instance", "TensorDict",
           "TextFieldTensors", "Token", "TokenIndexer", "Tokenizer", "Vocabulary", "allennlp_collate"]
