"""``allennlp.data.dataset_readers``: the base reader and AllenNLP core's readers."""

from distrain.data.reader import DatasetReader
from distrain.data.readers.sequence_tagging import SequenceTaggingDatasetReader
from distrain.data.readers.text_classification_json import TextClassificationJsonReader
from distrain.zoo.tagging.readers.conll2003 import Conll2003DatasetReader

__all__ = [
    "Conll2003DatasetReader", "DatasetReader", "SequenceTaggingDatasetReader", "TextClassificationJsonReader",
]
