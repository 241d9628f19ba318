"""``allennlp.data.dataset_readers``: the base reader (AllenNLP's ``read``, see
:mod:`distrain.allennlp.data.dataset_readers.dataset_reader`) and AllenNLP core's readers."""

from distrain.allennlp.data.dataset_readers.dataset_reader import DatasetReader, DistributedInfo, WorkerInfo
from distrain.allennlp.data.dataset_readers.multitask import MultiTaskDatasetReader
from distrain.data.readers.babi import BabiReader
from distrain.data.readers.interleaving import InterleavingDatasetReader
from distrain.data.readers.sequence_tagging import SequenceTaggingDatasetReader
from distrain.data.readers.sharded import ShardedDatasetReader
from distrain.data.readers.text_classification_json import TextClassificationJsonReader
from distrain.zoo.tagging.readers.conll2003 import Conll2003DatasetReader

__all__ = [
    "BabiReader", "Conll2003DatasetReader", "DatasetReader", "DistributedInfo", "InterleavingDatasetReader",
    "SequenceTaggingDatasetReader",
    "ShardedDatasetReader", "TextClassificationJsonReader", "WorkerInfo",
]
