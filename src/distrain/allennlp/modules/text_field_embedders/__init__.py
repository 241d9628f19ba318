"""``allennlp.modules.text_field_embedders``: a text field's tensors to one embedding per token."""

from distrain.modules.text_field_embedder import TextFieldEmbedder, BasicTextFieldEmbedder

__all__ = [
    "BasicTextFieldEmbedder", "TextFieldEmbedder",
]
