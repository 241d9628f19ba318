"""``allennlp.data.dataset_readers.text_classification_json``."""

from distrain.data.readers.text_classification_json import TextClassificationJsonReader

__all__ = [
    "TextClassificationJsonReader",
]
