"""Typed fields of an instance. A reader builds them; they know how to count and index themselves.

An instance is a plain ``dict[str, Field]``. Each field kind maps to one column kind of the
indexed dataset (see :mod:`distrain.data.dataset`), which is what pads and collates: nothing in
the loader knows about models.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import numpy as np

class Instance(dict):
    """Field name → :class:`Field`. A plain dict (readers may build one with ``{}``); ``fields`` and
    ``add_field`` are AllenNLP's names for the same thing."""

    @property
    def fields(self) -> dict:
        return self

    def add_field(self, name: str, field: Field, vocab: Any = None) -> None:
        self[name] = field


#: the separator of a text field's sub-columns: ``text::tokens::tokens`` is field ``text``, indexer
#: ``tokens``, tensor ``tokens``; batches regroup them into AllenNLP's ``TextFieldTensors`` nesting
SUBCOLUMN = "::"

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
    """A sequence of tokens (strings or :class:`~distrain.data.tokenizer.Token`).

    Without ``token_indexers`` it is one column of ids in ``namespace`` and the model receives a
    ``(batch, length)`` tensor. With them (AllenNLP's contract) each indexer makes its own tensors and
    the model receives ``{indexer name: {tensor name: tensor}}`` (``TextFieldTensors``).
    """

    column_kind = "ragged"

    def __init__(self, tokens: Sequence[Any], token_indexers: dict[str, Any] | str | None = None,
                 namespace: str = "tokens") -> None:
        if isinstance(token_indexers, str):  # the older positional form TextField(tokens, namespace)
            token_indexers, namespace = None, token_indexers
        self.tokens = list(tokens)
        self.token_indexers = token_indexers
        self.namespace = namespace

    def _texts(self) -> list[str]:
        return [token if isinstance(token, str) else token.text for token in self.tokens]

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        if self.token_indexers is None:
            counters.setdefault(self.namespace, Counter()).update(self._texts())
            return
        for indexer in self.token_indexers.values():
            for token in self.tokens:
                indexer.count_vocab_items(token, counters)

    def index(self, vocab: Any) -> np.ndarray:
        return np.asarray(vocab.token_indices(self._texts(), self.namespace), dtype=np.int64)

    def flatten(self, name: str, vocab: Any) -> dict[str, Field]:
        if self.token_indexers is None:
            return {name: self}
        columns: dict[str, Field] = {}
        for indexer_name, indexer in self.token_indexers.items():
            for key, leaf in indexer.tokens_to_indices(self.tokens, vocab).items():
                columns[f"{name}{SUBCOLUMN}{indexer_name}{SUBCOLUMN}{key}"] = leaf
        return columns

    def length(self) -> int:
        return len(self.tokens)

    def __len__(self) -> int:
        return len(self.tokens)


class ArrayField(Field):
    """An already-indexed array: ``"ragged"`` (rows padded with ``pad_value`` to the batch's longest) or
    ``"nested"`` (a list of 1-d arrays, e.g. each token's characters, padded on both levels, the inner
    one to at least ``min_width``). Token indexers make these."""

    def __init__(self, values: Any, pad_value: int | float = 0, column_kind: str = "ragged",
                 min_width: int = 0) -> None:
        self.values = values
        self.pad_value = pad_value
        self.column_kind = column_kind
        self.min_width = min_width

    def index(self, vocab: Any) -> Any:
        if self.column_kind != "nested":
            return self.values
        lengths = np.fromiter((len(item) for item in self.values), dtype=np.int64, count=len(self.values))
        flat = np.concatenate(self.values).astype(np.int64) if len(self.values) else np.zeros(0, dtype=np.int64)
        return flat, lengths

    def length(self) -> int:
        return len(self.values)


def flat_fields(instance: dict[str, Field], vocab: Any) -> dict[str, Field]:
    """``instance`` with each indexed text field replaced by its sub-columns (see :data:`SUBCOLUMN`)."""
    flat: dict[str, Field] = {}
    for name, field in instance.items():
        flatten = getattr(field, "flatten", None)
        flat.update(flatten(name, vocab) if flatten is not None else {name: field})
    return flat


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

    def __init__(self, label: str | int, label_namespace: str = "labels", skip_indexing: bool = False,
                 namespace: str | None = None) -> None:
        self.label = label
        self.namespace = namespace or label_namespace
        self.skip_indexing = skip_indexing

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        if not self.skip_indexing:
            counters.setdefault(self.namespace, Counter())[str(self.label)] += 1

    def index(self, vocab: Any) -> np.int64:
        if self.skip_indexing:
            return np.int64(self.label)
        return np.int64(vocab.label_index(str(self.label), self.namespace))


class SequenceLabelField(Field):
    """One label per token of a text field (tags), indexed into ``namespace``; padded with -100.

    AllenNLP's form ``SequenceLabelField(labels, sequence_field, label_namespace="labels")`` pads with 0,
    as AllenNLP did (its models mask padding with the text field's mask).
    """

    column_kind = "ragged"
    pad_value = IGNORED_LABEL

    def __init__(self, labels: Sequence[str], sequence_field: Any = None, label_namespace: str | None = None,
                 namespace: str | None = None) -> None:
        if isinstance(sequence_field, str):  # the older positional form SequenceLabelField(labels, namespace)
            sequence_field, namespace = None, sequence_field
        if sequence_field is not None:
            if len(sequence_field) != len(labels):
                raise ValueError(f"{len(labels)} labels for a sequence of {len(sequence_field)} tokens")
            self.pad_value = 0
        self.labels = [str(label) for label in labels]
        self.namespace = namespace or label_namespace or ("labels" if sequence_field is not None else "tags")

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
        self.metadata = value

    def __getitem__(self, key: Any) -> Any:
        return self.value[key]

    def index(self, vocab: Any) -> Any:
        return self.value
