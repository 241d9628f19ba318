"""Tokenizer base: text in, list of string tokens out; :class:`Token` is AllenNLP's token record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

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
    #: a ``tokenizer`` block that names no type is AllenNLP's default, spaCy's (so AllenNLP's configs read alike)
    default_implementation = "spacy"

    def tokenize(self, text: str) -> list[str]:
        raise NotImplementedError

    def tokens(self, text: str) -> list[Any]:
        """``text``'s tokens as a :class:`TextField` takes them (AllenNLP's ``tokenize``): what ``tokenize``
        gives, unless the tokenizer knows ids of its own (pretrained tokenizers give :class:`Token` records)."""
        return self.tokenize(text)

    def with_special_tokens(self, first: list[Any], second: list[Any] | None = None) -> list[Any]:
        """AllenNLP's ``add_special_tokens``: one or two token lists as one input; plain concatenation for
        tokenizers without special tokens."""
        return list(first) + list(second or [])

    def batch_tokenize(self, texts: list[str]) -> list[list[Any]]:
        """AllenNLP's name for tokenizing several texts; a tokenizer that can do them faster together overrides it."""
        return [self.tokenize(text) for text in texts]

    def to_field(self, text: str, namespace: str = "tokens") -> Field:
        """The field a reader stores for ``text``: string tokens indexed by the vocabulary, unless
        the tokenizer yields ids of its own (pretrained tokenizers)."""
        return TextField(self.tokenize(text), namespace=namespace)


def with_boundary_tokens(tokens: list[Any], start_tokens: Sequence[str | int] | None,
                         end_tokens: Sequence[str | int] | None, end_idx: int = -1) -> list[Any]:
    """AllenNLP's ``start_tokens`` and ``end_tokens`` around ``tokens``: those before at character offset 0,
    those after at ``end_idx`` (AllenNLP's word tokenizers used -1, its character tokenizer 0); an int is a
    token id (``text_id``) that bypasses the vocabulary, as with byte-encoded characters."""

    def boundary(value: str | int, idx: int) -> Token:
        return Token(text_id=value, idx=idx) if isinstance(value, int) else Token(value, idx=idx)

    return ([boundary(value, 0) for value in start_tokens or ()] + tokens
            + [boundary(value, end_idx) for value in end_tokens or ()])
