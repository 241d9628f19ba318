"""``allennlp.modules.text_field_embedders.basic_text_field_embedder``."""

from distrain.modules.text_field_embedder import BasicTextFieldEmbedder

__all__ = [
    "BasicTextFieldEmbedder",
]
