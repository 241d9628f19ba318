"""``allennlp.modules.text_field_embedders.text_field_embedder``."""

from distrain.modules.text_field_embedder import TextFieldEmbedder

__all__ = [
    "TextFieldEmbedder",
]
