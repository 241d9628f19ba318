"""``allennlp.data.fields.text_field``: distrain's text field with AllenNLP's field-by-field padding.

``index`` keeps each indexer's ids in ``_indexed_tokens``; padding keys are ``<indexer>___<key>`` as AllenNLP's, and
``as_tensor`` gives ``{indexer: {key: tensor}}``, the form distrain's loader gives a model too.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from distrain.allennlp.data.fields.field import Field, ItemSequence
from distrain.config.errors import ConfigError
from distrain.data.fields import TextField as DistrainTextField

__all__ = ["TextField"]

#: AllenNLP's separator of indexer name and tensor name in a text field's padding keys
KEY_SEPARATOR = "___"


class TextField(ItemSequence, DistrainTextField, Field):
    """AllenNLP's ``TextField(tokens, token_indexers)``. Without indexers it has distrain's one ``single_id``
    (AllenNLP 2's readers may leave them to ``apply_token_indexers``, which sets ``token_indexers``)."""

    held = "tokens"

    def __init__(self, tokens: Any, token_indexers: Any = None, namespace: str = "tokens") -> None:
        super().__init__(tokens, token_indexers, namespace)
        #: whether the reader gave indexers (AllenNLP's readers that shard over workers leave them to
        #: ``apply_token_indexers``)
        self.indexers_given = bool(token_indexers) and not isinstance(token_indexers, str)
        self._indexed_tokens: dict[str, dict[str, Any]] | None = None

    @property
    def _token_indexers(self) -> dict[str, Any]:
        """AllenNLP's attribute name for the indexers."""
        return self.token_indexers

    @_token_indexers.setter
    def _token_indexers(self, indexers: dict[str, Any]) -> None:
        self.token_indexers = indexers

    def index(self, vocab: Any) -> None:
        self._indexed_tokens = {name: indexer.tokens_to_indices(self.tokens, vocab)
                                for name, indexer in self.token_indexers.items()}

    def get_padding_lengths(self) -> dict[str, int]:
        if self._indexed_tokens is None:
            raise ConfigError("a TextField must be indexed (field.index(vocab)) before its padding lengths are read")
        lengths = {}
        for name, indexer in self.token_indexers.items():
            for key, length in indexer.get_padding_lengths(self._indexed_tokens[name]).items():
                lengths[f"{name}{KEY_SEPARATOR}{key}"] = length
        return lengths

    def as_tensor(self, padding_lengths: dict[str, int]) -> dict[str, dict[str, Any]]:
        if self._indexed_tokens is None:
            raise ConfigError("a TextField must be indexed (field.index(vocab)) before it becomes tensors")
        tensors = {}
        for name, indexer in self.token_indexers.items():
            prefix = f"{name}{KEY_SEPARATOR}"
            lengths = {key[len(prefix):]: length for key, length in padding_lengths.items() if key.startswith(prefix)}
            tensors[name] = indexer.as_padded_tensor_dict(self._indexed_tokens[name], lengths)
        return tensors

    def empty_field(self) -> TextField:
        empty = TextField([], self.token_indexers)
        empty._indexed_tokens = {name: indexer.get_empty_token_list() for name, indexer in self.token_indexers.items()}
        return empty

    def batch_tensors(self, tensor_list: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
        import torch

        first = tensor_list[0]
        return {name: {key: torch.stack([tensors[name][key] for tensors in tensor_list]) for key in first[name]}
                for name in first}

    def human_readable_repr(self) -> list[str]:
        return [getattr(token, "text", token) for token in self.tokens]

    def duplicate(self) -> TextField:
        """A copy whose indexers are the same objects (they may hold a large tokenizer)."""
        copy = TextField(deepcopy(self.tokens), self.token_indexers)
        copy._indexed_tokens = deepcopy(self._indexed_tokens)
        return copy

    def __str__(self) -> str:
        indexers = {name: type(indexer).__name__ for name, indexer in self.token_indexers.items()}
        return f"TextField of length {len(self.tokens)} with text: {self.tokens} and TokenIndexers: {indexers}"
