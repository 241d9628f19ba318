"""Typed fields of an instance. A reader builds them; they know how to count and index themselves.

An instance is a plain ``dict[str, Field]``. Each field kind maps to one column kind of the
indexed dataset (see :mod:`distrain.data.dataset`), which is what pads and collates: nothing in
the loader knows about models.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import numpy as np

Instance = dict  # dict[str, Field]: kept as a plain dict so readers stay simple

#: the label of a position no loss or metric counts (padding, a prompt's tokens): torch's ignore_index
IGNORED_LABEL = -100


class Field:
    #: the column kind this field indexes into: "ragged", "fixed" or "object"
    column_kind: str = "object"
    pad_value: int | float = 0

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        """Add this field's vocabulary items to ``counters[namespace]``."""

    def index(self, vocab: Any) -> Any:
        raise NotImplementedError

    def length(self) -> int:
        return 1


class TextField(Field):
    """A sequence of string tokens, indexed into ``namespace`` of the vocabulary."""

    column_kind = "ragged"

    def __init__(self, tokens: Sequence[str], namespace: str = "tokens") -> None:
        self.tokens = list(tokens)
        self.namespace = namespace

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        counters.setdefault(self.namespace, Counter()).update(self.tokens)

    def index(self, vocab: Any) -> np.ndarray:
        return np.asarray(vocab.token_indices(self.tokens, self.namespace), dtype=np.int64)

    def length(self) -> int:
        return len(self.tokens)


class TokenIdsField(Field):
    """Already-indexed token ids (e.g. from a pretrained tokenizer), padded with ``pad_value``."""

    column_kind = "ragged"

    def __init__(self, ids: Sequence[int], pad_value: int = 0) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self.pad_value = pad_value

    def index(self, vocab: Any) -> np.ndarray:
        return self.ids

    def length(self) -> int:
        return len(self.ids)


class LabelField(Field):
    """A categorical label, indexed into ``namespace`` (or given as an int with ``skip_indexing``)."""

    column_kind = "fixed"

    def __init__(self, label: str | int, namespace: str = "labels", skip_indexing: bool = False) -> None:
        self.label = label
        self.namespace = namespace
        self.skip_indexing = skip_indexing

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        if not self.skip_indexing:
            counters.setdefault(self.namespace, Counter())[str(self.label)] += 1

    def index(self, vocab: Any) -> np.int64:
        if self.skip_indexing:
            return np.int64(self.label)
        return np.int64(vocab.label_index(str(self.label), self.namespace))


class SequenceLabelField(Field):
    """One label per token of a text field (tags), indexed into ``namespace``; padded with -100."""

    column_kind = "ragged"
    pad_value = IGNORED_LABEL

    def __init__(self, labels: Sequence[str], namespace: str = "tags") -> None:
        self.labels = [str(label) for label in labels]
        self.namespace = namespace

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        counters.setdefault(self.namespace, Counter()).update(self.labels)

    def index(self, vocab: Any) -> np.ndarray:
        return np.asarray([vocab.label_index(label, self.namespace) for label in self.labels], dtype=np.int64)

    def length(self) -> int:
        return len(self.labels)


class TensorField(Field):
    """A dense array of fixed shape (feature vectors, regression targets)."""

    column_kind = "fixed"

    def __init__(self, array: Any, dtype: Any = np.float32) -> None:
        self.array = np.asarray(array, dtype=dtype)

    def index(self, vocab: Any) -> np.ndarray:
        return self.array


class MetadataField(Field):
    """Any Python object, passed through to the model as a list (never turned into a tensor)."""

    column_kind = "object"

    def __init__(self, value: Any) -> None:
        self.value = value

    def index(self, vocab: Any) -> Any:
        return self.value
