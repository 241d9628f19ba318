"""The field protocol every field kind follows, and :class:`ArrayField`, the already-indexed array that token
indexers hand back: a module of its own below :mod:`distrain.data.fields`, so that the indexers and the text field
that builds its default indexer import it without a cycle."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np


#: the separator of a text field's sub-columns: ``text::tokens::tokens`` is field ``text``, indexer
#: ``tokens``, tensor ``tokens``; batches regroup them into AllenNLP's ``TextFieldTensors`` nesting
SUBCOLUMN = "::"

#: the label of a position no loss or metric counts (padding, a prompt's tokens): torch's ignore_index
IGNORED_LABEL = -100


class Field:
    #: the column kind this field indexes into: "ragged", "nested", "fixed", "padded" or "object"
    column_kind: str = "object"
    pad_value: int | float = 0
    #: what stands for a missing element when a :class:`ListField` of these is padded (AllenNLP's empty field)
    empty_value: int | float | None = None

    def count_vocab_items(self, counters: dict[str, Counter]) -> None:
        """Add this field's vocabulary items to ``counters[namespace]``."""

    def index(self, vocab: Any) -> Any:
        raise NotImplementedError

    def length(self) -> int:
        return 1


class ArrayField(Field):
    """An already-indexed array, AllenNLP's ``ArrayField(array, padding_value=0, dtype=None)``: a batch pads each
    dimension to the batch's largest with ``padding_value`` (``pad_value`` is distrain's older name). Its column
    kind follows its rank unless given: a 0-d one (a regression target) is ``"fixed"``, a 1-d one ``"ragged"``,
    a deeper one ``"padded"``; ``"nested"`` is a list of 1-d arrays, e.g. each token's characters, padded on
    both levels, the inner one to at least ``min_width`` (token indexers make these). ``dtype`` converts the
    array, as AllenNLP's does; without it the array keeps its own."""

    def __init__(self, values: Any, padding_value: int | float = 0, column_kind: str | None = None,
                 min_width: int = 0, dtype: Any = None, pad_value: int | float | None = None) -> None:
        if column_kind != "nested":
            values = np.asarray(values, dtype=dtype)
        self.values = values
        self.pad_value = padding_value if pad_value is None else pad_value
        self.column_kind = column_kind or {0: "fixed", 1: "ragged"}.get(np.ndim(values), "padded")
        self.min_width = min_width

    @property
    def array(self) -> Any:
        """AllenNLP's name for the values."""
        return self.values

    @property
    def padding_value(self) -> int | float:
        return self.pad_value

    def index(self, vocab: Any) -> Any:
        if self.column_kind != "nested":
            return self.values
        lengths = np.fromiter((len(item) for item in self.values), dtype=np.int64, count=len(self.values))
        flat = np.concatenate(self.values).astype(np.int64) if len(self.values) else np.zeros(0, dtype=np.int64)
        return flat, lengths

    def length(self) -> int:
        return len(self.values) if self.column_kind == "nested" or np.ndim(self.values) else 1

    def tolist(self) -> Any:
        """The values as nested Python lists (a nested field's rows each a list)."""
        if self.column_kind == "nested":
            return [np.asarray(row).tolist() for row in self.values]
        return np.asarray(self.values).tolist()

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __len__(self) -> int:  # the rows, as the list AllenNLP's indexers gave had
        return len(self.values) if self.column_kind == "nested" or np.ndim(self.values) else 1

    def __getitem__(self, index: Any) -> Any:
        return self.tolist()[index]

    def __bool__(self) -> bool:  # a field is there even with no rows
        return True

    def __eq__(self, other: object) -> bool:
        """Equal to the lists it holds (AllenNLP's indexers gave lists, and its tests compare them), to an array of
        the same values, and to an array field of the same values and padding."""
        if isinstance(other, ArrayField):
            return self.tolist() == other.tolist() and self.pad_value == other.pad_value
        if isinstance(other, (list, tuple, np.ndarray)):
            return self.tolist() == (other.tolist() if isinstance(other, np.ndarray) else list(other))
        return NotImplemented

    __hash__ = Field.__hash__
