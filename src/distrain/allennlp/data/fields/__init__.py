"""``allennlp.data.fields``: the fields an instance is made of, under AllenNLP's names."""

from distrain.data.fields import (AdjacencyField, ArrayField, Field, IndexField, LabelField, ListField, MetadataField,
                                  SequenceLabelField, TensorField, TextField)
from distrain.data.label_fields import FlagField, MultiLabelField, SpanField

__all__ = [
    "AdjacencyField", "ArrayField", "Field", "FlagField", "IndexField", "LabelField", "ListField", "MetadataField",
    "MultiLabelField", "SequenceLabelField", "SpanField", "TensorField", "TextField",
]
