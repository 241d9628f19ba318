"""``allennlp.data.fields.metadata_field``: distrain's metadata field, a read-only mapping over its value as
AllenNLP's is (``field["key"]``, ``len``, iteration; a ``TypeError`` where the value is no mapping)."""

from __future__ import annotations

from typing import Any, Iterator

from distrain.allennlp.data.fields.field import Field
from distrain.data.fields import MetadataField as DistrainMetadataField

__all__ = ["MetadataField"]


class MetadataField(DistrainMetadataField, Field):
    flatten = None  # distrain's own protocol indexes it

    def get_padding_lengths(self) -> dict[str, int]:
        return {}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        return self.metadata

    def empty_field(self) -> MetadataField:
        return MetadataField(None)

    def batch_tensors(self, tensor_list: list[Any]) -> list[Any]:
        return list(tensor_list)

    def human_readable_repr(self) -> Any:
        readable = getattr(self.metadata, "human_readable_repr", None)
        return readable() if callable(readable) else self.metadata

    def __bool__(self) -> bool:  # a field is there whatever its value; len() is the mapping's
        return True

    def __iter__(self) -> Iterator[Any]:
        return iter(self.metadata)

    def __len__(self) -> int:
        return len(self.metadata)

    def __contains__(self, key: Any) -> bool:
        return key in self.metadata

    def keys(self) -> Any:
        return self.metadata.keys()

    def values(self) -> Any:
        return self.metadata.values()

    def items(self) -> Any:
        return self.metadata.items()

    def __str__(self) -> str:
        return "MetadataField (print field.metadata to see specific information)."
