"""TokenIndexer base: how one text field's tokens become tensors (AllenNLP's contract).

A text field may carry several indexers (word ids, characters, word pieces); each names the tensors it
makes, and the model receives ``{indexer name: {tensor name: tensor}}`` for the field. Indexers count
vocabulary items in the parent's counting pass and index with the finished vocabulary, so they run
once, in the process that prepares the data.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from distrain.config.constraints import NonNegativeInt
from distrain.data.field import ArrayField
from distrain.registry import Registrable


def token_text(token: Any) -> str:
    """A token's text, whether the reader made strings or :class:`~distrain.data.tokenizer.Token`."""
    return token if isinstance(token, str) else token.text


class TokenIndexer(Registrable):
    """``token_min_padding_length`` is accepted for AllenNLP configs; batches pad to their longest field.

    ``get_padding_lengths``, ``as_padded_tensor_dict`` and ``get_empty_token_list`` are AllenNLP's field-by-field
    padding, which distrain's loader does not use (its column dataset pads a whole batch at once): they serve code
    written against AllenNLP's ``Field.as_tensor``. They work on what :meth:`tokens_to_indices` gave, array fields
    or lists; a list of lists (each token's characters) pads on two levels, the inner one under ``num_<key>``."""

    default_implementation = "single_id"

    def __init__(self, token_min_padding_length: NonNegativeInt = 0) -> None:
        self.token_min_padding_length = token_min_padding_length

    def count_vocab_items(self, token: Any, counters: dict[str, Counter]) -> None:
        """Add ``token``'s vocabulary items (the vocabulary is built from these counts)."""

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        """The tensors for one field: name → an indexed :class:`ArrayField`."""
        raise NotImplementedError

    def get_padding_lengths(self, indexed_tokens: dict[str, Any]) -> dict[str, int]:
        """Each tensor's length (at least ``token_min_padding_length``); a nested one's longest row as ``num_<key>``."""
        lengths: dict[str, int] = {}
        for key, value in indexed_tokens.items():
            rows = _rows(value)
            if rows is not None:
                lengths[f"num_{key}"] = max([len(row) for row in rows] + [getattr(value, "min_width", 0)])
            lengths[key] = max(len(rows) if rows is not None else _length(value), self.token_min_padding_length)
        return lengths

    def as_padded_tensor_dict(self, tokens: dict[str, Any], padding_lengths: dict[str, int]) -> dict[str, Any]:
        """Each tensor padded (or cut) to ``padding_lengths[key]`` with its padding value (0 for lists)."""
        import torch

        tensors = {}
        for key, value in tokens.items():
            pad = getattr(value, "pad_value", 0)
            rows = _rows(value)
            if rows is not None and padding_lengths[key] == 0:
                tensors[key] = torch.zeros(0, dtype=torch.long)  # no tokens: AllenNLP's empty list
                continue
            if rows is not None:
                width = padding_lengths.get(f"num_{key}", max([len(row) for row in rows] + [0]))
                array = np.full((padding_lengths[key], width), pad, dtype=np.int64)
                for position, row in enumerate(rows[:padding_lengths[key]]):
                    row = np.asarray(row, dtype=np.int64)[:width]
                    array[position, :len(row)] = row
            else:
                values = np.asarray(value.values if isinstance(value, ArrayField) else value)
                if not isinstance(value, (ArrayField, np.ndarray)) or values.dtype == object:
                    values = values.astype(np.int64)  # AllenNLP's indexers gave lists of ids
                array = np.full((padding_lengths[key], *values.shape[1:]), pad, dtype=values.dtype)
                array[:min(len(values), padding_lengths[key])] = values[:padding_lengths[key]]
            tensors[key] = torch.from_numpy(array)
        return tensors

    def get_empty_token_list(self) -> dict[str, Any]:
        """The indexed form of no tokens (what an empty field of a list pads with)."""
        from distrain.data.vocabulary import Vocabulary

        empty: dict[str, Any] = {}
        for key, value in self.tokens_to_indices([], Vocabulary()).items():
            if isinstance(value, ArrayField) and value.column_kind == "nested":
                empty[key] = ArrayField([], value.pad_value, "nested", value.min_width)
            elif isinstance(value, ArrayField):
                values = np.asarray(value.values)
                empty[key] = ArrayField(np.zeros((0, *values.shape[1:]), dtype=values.dtype), value.pad_value)
            else:
                empty[key] = []
        return empty


def _rows(value: Any) -> list | None:
    """The rows of a nested indexed value (an array field of rows, or a list of lists), else None."""
    if isinstance(value, ArrayField):
        return list(value.values) if value.column_kind == "nested" else None
    if isinstance(value, (list, tuple)) and value and all(isinstance(row, (list, tuple, np.ndarray)) for row in value):
        return list(value)
    return None


def _length(value: Any) -> int:
    values = getattr(value, "values", value)
    return len(values) if np.ndim(values) else 1
