"""``allennlp.data.fields``: the fields an instance is made of, under AllenNLP's names."""

from distrain.data.fields import (AdjacencyField, ArrayField, Field, IndexField, LabelField, ListField, MetadataField,
                                  SequenceLabelField, TensorField, TextField)

__all__ = [
    "AdjacencyField", "ArrayField", "Field", "IndexField", "LabelField", "ListField", "MetadataField",
    "SequenceLabelField", "TensorField", "TextField",
]
