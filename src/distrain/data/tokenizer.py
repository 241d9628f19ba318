"""Tokenizer base: text in, list of string tokens out."""

from __future__ import annotations

from distrain.data.fields import Field, TextField
from distrain.registry import Registrable


class Tokenizer(Registrable):
    default_implementation = "whitespace"

    def tokenize(self, text: str) -> list[str]:
        raise NotImplementedError

    def to_field(self, text: str, namespace: str = "tokens") -> Field:
        """The field a reader stores for ``text``: string tokens indexed by the vocabulary, unless
        the tokenizer yields ids of its own (pretrained tokenizers)."""
        return TextField(self.tokenize(text), namespace)
