"""``allennlp.data.fields.namespace_swapping_field``: CopyNet's field (source tokens as ids of the target
namespace) under AllenNLP's signature and field API."""

from __future__ import annotations

from typing import Any

import numpy as np

from distrain.allennlp.data.fields.field import Field, padded_ids
from distrain.data.tokenizer import Token
from distrain.zoo.seq2seq.readers.copynet_seq2seq import NamespaceSwappingField as DistrainNamespaceSwappingField

__all__ = ["NamespaceSwappingField"]


class NamespaceSwappingField(DistrainNamespaceSwappingField, Field):
    flatten = None  # distrain's own protocol indexes it

    def __init__(self, source_tokens: list[Any], target_namespace: str) -> None:
        super().__init__([getattr(token, "text", token) for token in source_tokens], target_namespace)
        self._source_tokens = list(source_tokens)
        self._target_namespace = target_namespace
        self._mapping_array: list[int] = []

    def index(self, vocab: Any) -> np.ndarray:
        ids = super().index(vocab)
        self._mapping_array = ids.tolist()
        return ids

    def get_padding_lengths(self) -> dict[str, int]:
        return {"num_tokens": len(self.words)}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        return padded_ids(self._mapping_array, padding_lengths["num_tokens"])

    def empty_field(self) -> NamespaceSwappingField:
        return NamespaceSwappingField([], self._target_namespace)

    def human_readable_repr(self) -> list[str]:
        return [token.text if isinstance(token, Token) else token for token in self._source_tokens]
