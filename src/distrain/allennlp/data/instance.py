"""``allennlp.data.instance``: distrain's instance (a dict of fields) with AllenNLP's methods on it: counting and
indexing its fields, its padding lengths, and its tensors padded field by field."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from distrain.data.fields import Instance as DistrainInstance

__all__ = ["Instance"]


class Instance(DistrainInstance):
    """AllenNLP's ``Instance``; ``indexed`` says whether :meth:`index_fields` has run since the last change."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.indexed = False

    def add_field(self, name: str, field: Any, vocab: Any = None) -> None:
        self[name] = field
        if self.indexed and vocab is not None:
            field.index(vocab)

    def count_vocab_items(self, counter: Any) -> None:
        for field in self.values():
            field.count_vocab_items(counter)

    def index_fields(self, vocab: Any) -> None:
        """Index every field with ``vocab`` (once: AllenNLP's instances are indexed by the first vocabulary)."""
        if not self.indexed:
            for field in self.values():
                if hasattr(field, "as_tensor"):  # distrain's own fields are indexed as they are batched
                    field.index(vocab)
            self.indexed = True

    def get_padding_lengths(self) -> dict[str, dict[str, int]]:
        return {name: field.get_padding_lengths() for name, field in self.items()}

    def as_tensor_dict(self, padding_lengths: dict[str, dict[str, int]] | None = None) -> dict[str, Any]:
        """Each field as a tensor padded to ``padding_lengths[name]`` (its own lengths where not given)."""
        padding_lengths = padding_lengths or self.get_padding_lengths()
        return {name: field.as_tensor(padding_lengths[name]) for name, field in self.items()}

    def duplicate(self) -> Instance:
        copy = Instance({name: field.duplicate() if hasattr(field, "duplicate") else deepcopy(field)
                         for name, field in self.items()})
        copy.indexed = self.indexed
        return copy

    def human_readable_dict(self) -> dict[str, Any]:
        return {name: field.human_readable_repr() for name, field in self.items()}

    def __str__(self) -> str:
        return "Instance with fields:\n" + "".join(f"\t {name}: {field} \n" for name, field in self.items())


def as_instance(instance: Any) -> Any:
    """``instance`` as an AllenNLP :class:`Instance` (a plain dict of fields wrapped; anything else as it is)."""
    return instance if isinstance(instance, Instance) or not isinstance(instance, dict) else Instance(instance)
