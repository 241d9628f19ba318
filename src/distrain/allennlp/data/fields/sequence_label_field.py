"""``allennlp.data.fields.sequence_label_field``."""

from distrain.data.fields import SequenceLabelField

__all__ = [
    "SequenceLabelField",
]
