"""Tokenizer base: text in, list of string tokens out."""

from __future__ import annotations

from distrain.registry import Registrable


class Tokenizer(Registrable):
    default_implementation = "whitespace"

    def tokenize(self, text: str) -> list[str]:
        raise NotImplementedError
