"""``allennlp.data.fields.adjacency_field``."""

from distrain.data.fields import AdjacencyField

__all__ = [
    "AdjacencyField",
]
