"""``allennlp.data.fields.metadata_field``."""

from distrain.data.fields import MetadataField

__all__ = [
    "MetadataField",
]
