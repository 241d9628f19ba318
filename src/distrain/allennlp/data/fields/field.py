"""``allennlp.data.fields.field``: AllenNLP's field API over distrain's field protocol.

distrain's fields index themselves into columns that its dataset pads a batch at a time (:mod:`distrain.data.field`).
AllenNLP's pad one field at a time: ``index`` keeps the ids on the field, ``get_padding_lengths`` says how long each
part is, ``as_tensor(padding_lengths)`` pads to the lengths it is given and ``batch_tensors`` stacks one batch's.
The ``allennlp`` fields are distrain's with that API added, so a reader written for AllenNLP runs in distrain's
pipeline while AllenNLP-style code (and AllenNLP's own tests) can still pad field by field.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any, Iterator

import numpy as np

from distrain.data.field import Field as DistrainField

__all__ = ["Field", "ItemSequence", "padded_ids", "same_value"]


class ItemSequence:
    """AllenNLP's fields that hold a sequence (tokens, labels, fields) are that sequence to its code: ``field[i]``,
    ``iter(field)``, ``len(field)`` read the attribute ``held`` names."""

    held: str

    def __getitem__(self, position: int) -> Any:
        return getattr(self, self.held)[position]

    def __iter__(self) -> Iterator[Any]:
        return iter(getattr(self, self.held))

    def __len__(self) -> int:
        return len(getattr(self, self.held))


def padded_ids(ids: Any, length: int) -> Any:
    """A sequence's ids as a long tensor of ``length``: cut to it, or padded with 0 (AllenNLP's padding id)."""
    import torch

    tensor = torch.zeros(length, dtype=torch.long)
    kept = list(ids)[:length]
    tensor[:len(kept)] = torch.tensor(kept, dtype=torch.long)
    return tensor


def same_value(first: Any, second: Any) -> bool:
    """Equality that also holds for arrays and tensors (their values and shapes), inside lists and dicts too."""
    if first is second:
        return True
    if hasattr(first, "detach") or hasattr(second, "detach") or isinstance(first, np.ndarray) \
            or isinstance(second, np.ndarray):
        first, second = np.asarray(_numpy(first)), np.asarray(_numpy(second))
        return first.shape == second.shape and bool(np.array_equal(first, second))
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(same_value(first[key], second[key]) for key in first)
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        return len(first) == len(second) and all(same_value(a, b) for a, b in zip(first, second))
    return bool(first == second)


def _numpy(value: Any) -> Any:
    return value.detach().cpu().numpy() if hasattr(value, "detach") else value


def _state(field: Any) -> dict[str, Any]:
    """A field's attributes, from its ``__dict__`` and the ``__slots__`` of every class it is made of."""
    state = dict(getattr(field, "__dict__", {}))
    for klass in type(field).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if hasattr(field, name):
                state[name] = getattr(field, name)
    return state


class Field(DistrainField):
    """AllenNLP's ``Field``: a field equals another of its class with the same attributes (slots included)."""

    def index(self, vocab: Any) -> Any:
        """Keep this field's ids (nothing to do by default)."""

    def get_padding_lengths(self) -> dict[str, int]:
        raise NotImplementedError

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        raise NotImplementedError

    def empty_field(self) -> Field:
        raise NotImplementedError

    def human_readable_repr(self) -> Any:
        raise NotImplementedError

    def batch_tensors(self, tensor_list: list[Any]) -> Any:
        """One batch's tensors of this field stacked along a new first dimension."""
        import torch

        return torch.stack(tensor_list)

    def duplicate(self) -> Field:
        return deepcopy(self)

    def flatten(self, name: str, vocab: Any) -> dict[str, DistrainField]:
        """How distrain's loader takes a field written to AllenNLP's API alone (a user's own): indexed and turned
        into its tensor at its own lengths, then padded per batch with 0 like an array field (a result that is
        not a tensor, or a dict of them, passes through as metadata). The ``allennlp`` fields over distrain's set
        this to None: distrain's own protocol indexes them."""
        from distrain.data.field import ArrayField
        from distrain.data.fields import MetadataField

        self.index(vocab)
        value = self.as_tensor(self.get_padding_lengths())
        if hasattr(value, "detach"):
            return {name: ArrayField(value.detach().cpu().numpy())}
        return {name: MetadataField(value)}

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, type(self)) or isinstance(self, type(other)):
            if type(self) is not type(other):
                return False
            return same_value(_state(self), _state(other))
        return NotImplemented

    __hash__ = DistrainField.__hash__

    def __len__(self) -> int:
        raise NotImplementedError
