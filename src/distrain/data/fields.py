"""Typed fields of an instance. A reader builds them; they know how to count and index themselves.

An instance is a plain ``dict[str, Field]``. Each field kind maps to one column kind of the
indexed dataset (see :mod:`distrain.data.dataset`), which is what pads and collates: nothing in
the loader knows about models.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import numpy as np

from distrain.data.field import IGNORED_LABEL, SUBCOLUMN, ArrayField, Field
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.errors import ConfigError

class Instance(dict):
    """Field name → :class:`Field`. A plain dict (readers may build one with ``{}``); ``fields`` and
    ``add_field`` are AllenNLP's names for the same thing, and ``Instance(fields={...})`` is AllenNLP's
    constructor (a field can therefore not be called ``fields`` through keywords: pass a dict)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not args and set(kwargs) == {"fields"} and isinstance(kwargs["fields"], dict):
            args, kwargs = (kwargs["fields"],), {}
        super().__init__(*args, **kwargs)

    @property
    def fields(self) -> dict:
        return self

    def add_field(self, name: str, field: Field, vocab: Any = None) -> None:
        self[name] = field


class TextField(Field):
    """A sequence of tokens (strings or :class:`~distrain.data.tokenizer.Token`), indexed by its
    ``token_indexers`` (AllenNLP's contract): each indexer makes its own tensors and the model receives
    ``{indexer name: {tensor name: tensor}}`` (``TextFieldTensors``). Without indexers the field has one,
    ``{"tokens": single_id}`` in ``namespace``, so every model receives that one form.
    """

    column_kind = "ragged"

    def __init__(self, tokens: Sequence[Any], token_indexers: dict[str, Any] | str | None = None,
                 namespace: str = "tokens") -> None:
        if isinstance(token_indexers, str):  # the older positional form TextField(tokens, namespace)
            token_indexers, namespace = None, token_indexers
        self.tokens = list(tokens)
        self.token_indexers = token_indexers if token_indexers is not None else {
            "tokens": SingleIdTokenIndexer(namespace=namespace)}

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        for indexer in self.token_indexers.values():
            for token in self.tokens:
                indexer.count_vocab_items(token, counters)

    def flatten(self, name: str, vocab: Any) -> dict[str, Field]:
        columns: dict[str, Field] = {}
        for indexer_name, indexer in self.token_indexers.items():
            for key, leaf in indexer.tokens_to_indices(self.tokens, vocab).items():
                columns[f"{name}{SUBCOLUMN}{indexer_name}{SUBCOLUMN}{key}"] = leaf
        return columns

    def length(self) -> int:
        return len(self.tokens)

    def __len__(self) -> int:
        return len(self.tokens)


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
    """A categorical label, indexed into ``namespace`` (or given as an int with ``skip_indexing``).

    It also answers AllenNLP's field calls (``as_tensor`` after ``index``, ``empty_field``,
    ``human_readable_repr``)."""

    column_kind = "fixed"
    empty_value = -1

    def __init__(self, label: str | int, label_namespace: str = "labels", skip_indexing: bool = False,
                 namespace: str | None = None) -> None:
        self.label = label
        self.namespace = namespace or label_namespace
        self.skip_indexing = skip_indexing
        if skip_indexing and not isinstance(label, (int, np.integer)):
            raise ConfigError(f"LabelField: with skip_indexing the label is an int id, not {label!r}")
        self._label_id = int(label) if skip_indexing else None

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        if not self.skip_indexing:
            counters.setdefault(self.namespace, Counter())[str(self.label)] += 1

    def index(self, vocab: Any) -> np.int64:
        if not self.skip_indexing:
            self._label_id = vocab.label_index(str(self.label), self.namespace)
        return np.int64(self._label_id)

    def get_padding_lengths(self) -> dict[str, int]:
        return {}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        import torch

        return torch.tensor(self._label_id, dtype=torch.long)

    def empty_field(self) -> LabelField:
        return LabelField(-1, self.namespace, skip_indexing=True)

    def human_readable_repr(self) -> str | int:
        return self.label


class IndexField(Field):
    """An index into a sequence field (an answer's first token); -1 stands for a missing one in a
    :class:`ListField`, as in AllenNLP (models ignore it with ``ignore_index=-1``). Equal to its index, and to an
    index field of the same position in the same sequence."""

    column_kind = "fixed"
    empty_value = -1

    def __init__(self, index: int, sequence_field: Any = None) -> None:
        if not isinstance(index, (int, np.integer)):
            raise ConfigError(f"IndexField: the index is an int, not {index!r}")
        if sequence_field is not None and not -1 <= index < len(sequence_field):
            raise ValueError(f"index {index} is outside a sequence of {len(sequence_field)}")
        self.sequence_index = int(index)
        self.sequence_field = sequence_field

    def index(self, vocab: Any) -> np.int64:
        return np.int64(self.sequence_index)

    def get_padding_lengths(self) -> dict[str, int]:
        return {}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        import torch

        return torch.tensor([self.sequence_index], dtype=torch.long)

    def empty_field(self) -> IndexField:
        return IndexField(-1, None)

    def human_readable_repr(self) -> int:
        return self.sequence_index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            return self.sequence_index == other
        if isinstance(other, IndexField):
            return self.sequence_index == other.sequence_index and self.sequence_field is other.sequence_field
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.sequence_index)


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


class AdjacencyField(Field):
    """Labelled arcs between the tokens of a sequence field (AllenNLP's ``AdjacencyField``): an ``(n, n)`` matrix with
    each arc's label id at ``[i, j]`` (1 where no labels are given) and ``padding_value`` everywhere else, padded with
    it too."""

    column_kind = "padded"

    def __init__(self, indices: Sequence[tuple[int, int]], sequence_field: Any, labels: Sequence[str] | None = None,
                 label_namespace: str = "labels", padding_value: int = -1) -> None:
        self.indices = [(int(i), int(j)) for i, j in indices]
        self.size = len(sequence_field)
        if len(set(self.indices)) != len(self.indices):
            raise ValueError(f"repeated arcs among {self.indices}")
        if any(not (0 <= i < self.size and 0 <= j < self.size) for i, j in self.indices):
            raise ValueError(f"an arc of {self.indices} lies outside a sequence of {self.size}")
        if labels is not None and len(labels) != len(self.indices):
            raise ValueError(f"{len(labels)} labels for {len(self.indices)} arcs")
        self.labels = None if labels is None else [str(label) for label in labels]
        self.namespace = label_namespace
        self.pad_value = padding_value

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        if self.labels is not None:
            counters.setdefault(self.namespace, Counter()).update(self.labels)

    def index(self, vocab: Any) -> np.ndarray:
        matrix = np.full((self.size, self.size), self.pad_value, dtype=np.int64)
        for position, (i, j) in enumerate(self.indices):
            matrix[i, j] = 1 if self.labels is None else vocab.label_index(self.labels[position], self.namespace)
        return matrix

    def length(self) -> int:
        return self.size


class ListField(Field):
    """Fields of one kind in a list (AllenNLP's ``ListField``: a dialog's questions, their answer spans).

    Each leaf column of the elements (a text field's indexer tensors, a label) becomes one array with a leading list
    dimension (column kind ``"padded"``), padded per batch in every dimension: a missing element with the
    element's ``empty_value`` (-1 for labels and indices), the rest with the element's own padding. The model gets
    ``(batch, elements, ...)`` tensors, a text field's nested as for a single one."""

    column_kind = "padded"

    def __init__(self, field_list: Sequence[Field]) -> None:
        if not field_list:
            raise ValueError("a ListField needs at least one field")
        self.field_list = list(field_list)

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        for element in self.field_list:
            element.count_vocab_items(counters)

    def flatten(self, name: str, vocab: Any) -> dict[str, Field]:
        leaves: dict[str, list[Field]] = {}
        for element in self.field_list:
            for key, leaf in flat_fields({name: element}, vocab).items():
                leaves.setdefault(key, []).append(leaf)
        return {key: PaddedArrayField([_dense(leaf, vocab) for leaf in items], _list_pad_value(items[0]),
                                      getattr(items[0], "min_width", 0)) for key, items in leaves.items()}

    def length(self) -> int:
        return len(self.field_list)

    def __len__(self) -> int:
        return len(self.field_list)

    def __getitem__(self, position: int) -> Field:
        return self.field_list[position]

    def __iter__(self) -> Any:
        return iter(self.field_list)


class PaddedArrayField(Field):
    """Arrays of one rank, stacked along a new first dimension, padded to the largest in each dimension with
    ``pad_value`` (the last dimension to at least ``min_width``): a :class:`ListField`'s leaf column."""

    column_kind = "padded"

    def __init__(self, arrays: Sequence[np.ndarray], pad_value: int | float = 0, min_width: int = 0) -> None:
        self.arrays = [np.asarray(array) for array in arrays]
        self.pad_value = pad_value
        self.min_width = min_width

    def index(self, vocab: Any) -> np.ndarray:
        return pad_arrays(self.arrays, self.pad_value, self.min_width)

    def length(self) -> int:
        return len(self.arrays)


def pad_arrays(arrays: Sequence[np.ndarray], pad_value: int | float, min_width: int = 0) -> np.ndarray:
    """``arrays`` (one rank) stacked into one, each dimension padded to the largest (the last to ``min_width``)."""
    shape = [max(sizes) for sizes in zip(*(array.shape for array in arrays))]
    if shape and min_width:
        shape[-1] = max(shape[-1], min_width)
    dtype = np.result_type(*arrays) if arrays else np.int64
    out = np.full((len(arrays), *shape), pad_value, dtype=dtype)
    for position, array in enumerate(arrays):
        out[(position, *(slice(0, size) for size in array.shape))] = array
    return out


def _dense(leaf: Field, vocab: Any) -> np.ndarray:
    """A leaf's indexed value as one array (a nested leaf's rows padded to its longest)."""
    value = leaf.index(vocab)
    if leaf.column_kind != "nested":
        return np.asarray(value)
    flat, lengths = value
    rows = np.split(flat, np.cumsum(lengths)[:-1]) if len(lengths) else []
    return pad_arrays(rows, leaf.pad_value) if rows else np.zeros((0, 0), dtype=np.int64)


def _list_pad_value(leaf: Field) -> int | float:
    return leaf.empty_value if leaf.empty_value is not None else leaf.pad_value


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
