"""``allennlp.data.fields``: the fields an instance is made of, under AllenNLP's names: distrain's fields with
AllenNLP's field-by-field API (see :mod:`distrain.allennlp.data.fields.field`)."""

from typing import Any

from distrain.allennlp.data.fields.adjacency_field import AdjacencyField
from distrain.allennlp.data.fields.field import Field
from distrain.allennlp.data.fields.flag_field import FlagField
from distrain.allennlp.data.fields.index_field import IndexField
from distrain.allennlp.data.fields.label_field import LabelField
from distrain.allennlp.data.fields.list_field import ListField
from distrain.allennlp.data.fields.metadata_field import MetadataField
from distrain.allennlp.data.fields.multilabel_field import MultiLabelField
from distrain.allennlp.data.fields.sequence_label_field import SequenceLabelField
from distrain.allennlp.data.fields.span_field import SpanField
from distrain.allennlp.data.fields.tensor_field import ArrayField, TensorField
from distrain.allennlp.data.fields.text_field import TextField

__all__ = [
    "AdjacencyField", "ArrayField", "Field", "FlagField", "IndexField", "LabelField", "ListField", "MetadataField",
    "MultiLabelField", "NamespaceSwappingField", "SequenceLabelField", "SpanField", "TensorField", "TextField",
]


def __getattr__(name: str) -> Any:
    # CopyNet's field lives with its reader in the seq2seq zoo: imported when asked for
    if name == "NamespaceSwappingField":
        from distrain.allennlp.data.fields.namespace_swapping_field import NamespaceSwappingField

        return NamespaceSwappingField
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
