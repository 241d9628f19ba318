"""Tokenizer base: text in, list of string tokens out; :class:`Token` is AllenNLP's token record."""

from __future__ import annotations

from dataclasses import dataclass

from distrain.data.fields import Field, TextField
from distrain.registry import Registrable


@dataclass
class Token:
    """A token as AllenNLP readers build them: its text, optional character offsets and tags, and an id
    a pretrained tokenizer already chose (``text_id``), which indexers use instead of the vocabulary."""

    text: str | None = None
    idx: int | None = None
    idx_end: int | None = None
    lemma_: str | None = None
    pos_: str | None = None
    tag_: str | None = None
    dep_: str | None = None
    ent_type_: str | None = None
    text_id: int | None = None
    type_id: int | None = None

    def __str__(self) -> str:
        return self.text or ""


class Tokenizer(Registrable):
    default_implementation = "whitespace"

    def tokenize(self, text: str) -> list[str]:
        raise NotImplementedError

    def to_field(self, text: str, namespace: str = "tokens") -> Field:
        """The field a reader stores for ``text``: string tokens indexed by the vocabulary, unless
        the tokenizer yields ids of its own (pretrained tokenizers)."""
        return TextField(self.tokenize(text), namespace=namespace)
