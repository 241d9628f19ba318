"""``allennlp.data.fields.list_field``: distrain's list field with AllenNLP's field-by-field padding.

Its padding lengths are ``num_fields`` and each element's keys prefixed ``list_`` (the largest over the elements);
``as_tensor`` fills the list to ``num_fields`` with its first element's empty field and stacks the elements' tensors.
"""

from __future__ import annotations

from typing import Any, Sequence

from distrain.allennlp.data.fields.field import Field, ItemSequence
from distrain.data.fields import ListField as DistrainListField

__all__ = ["ListField"]


class ListField(ItemSequence, DistrainListField, Field):
    held = "field_list"

    def __init__(self, field_list: Sequence[Any]) -> None:
        super().__init__(field_list)

    def count_vocab_items(self, counter: dict[str, dict[str, int]]) -> None:
        for field in self.field_list:
            field.count_vocab_items(counter)

    def index(self, vocab: Any) -> None:
        for field in self.field_list:
            field.index(vocab)

    def get_padding_lengths(self) -> dict[str, int]:
        lengths: dict[str, int] = {"num_fields": len(self.field_list)}
        for field in self.field_list:
            for key, length in field.get_padding_lengths().items():
                lengths[f"list_{key}"] = max(lengths.get(f"list_{key}", 0), length)
        return lengths

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        count = padding_lengths["num_fields"]
        fields = list(self.field_list[:count])
        if len(fields) < count:
            fields += [self.field_list[0].empty_field() for _ in range(count - len(fields))]
        inner = {key[len("list_"):]: length for key, length in padding_lengths.items() if key.startswith("list_")}
        return self.field_list[0].batch_tensors([field.as_tensor(inner) for field in fields])

    def empty_field(self) -> ListField:
        return ListField([self.field_list[0].empty_field()])

    def batch_tensors(self, tensor_list: list[Any]) -> Any:
        return self.field_list[0].batch_tensors(tensor_list)

    def human_readable_repr(self) -> list[Any]:
        return [field.human_readable_repr() for field in self.field_list]

    def __str__(self) -> str:
        kinds = {type(field).__name__ for field in self.field_list}
        return f"ListField of {len(self.field_list)} {', '.join(sorted(kinds))}s"
