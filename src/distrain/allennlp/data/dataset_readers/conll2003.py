"""``allennlp.data.dataset_readers.conll2003``."""

from distrain.zoo.tagging.readers.conll2003 import Conll2003DatasetReader

__all__ = [
    "Conll2003DatasetReader",
]
