"""``allennlp.data.dataset_readers.dataset_reader``."""

from distrain.data.reader import DatasetReader

__all__ = [
    "DatasetReader",
]
