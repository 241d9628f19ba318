"""``allennlp.data.dataset_readers.sequence_tagging``."""

from distrain.data.readers.sequence_tagging import SequenceTaggingDatasetReader

__all__ = [
    "SequenceTaggingDatasetReader",
]
