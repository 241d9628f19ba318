"""``allennlp.data.fields.adjacency_field``: distrain's adjacency field with AllenNLP's checks (a
``ConfigurationError``) and field API."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from distrain.allennlp.data.fields.field import Field
from distrain.config.errors import ConfigError
from distrain.data.fields import AdjacencyField as DistrainAdjacencyField

__all__ = ["AdjacencyField"]


class AdjacencyField(DistrainAdjacencyField, Field):
    flatten = None  # distrain's own protocol indexes it

    def __init__(self, indices: Sequence[tuple[int, int]], sequence_field: Any, labels: Sequence[str] | None = None,
                 label_namespace: str = "labels", padding_value: int = -1) -> None:
        try:
            super().__init__(indices, sequence_field, labels, label_namespace, padding_value)
        except ValueError as problem:
            raise ConfigError(f"AdjacencyField: {problem}") from None
        self.sequence_field = sequence_field
        self._indexed_matrix: np.ndarray | None = None

    def index(self, vocab: Any) -> np.ndarray:
        self._indexed_matrix = super().index(vocab)
        return self._indexed_matrix

    def get_padding_lengths(self) -> dict[str, int]:
        return {"num_tokens": self.size}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        import torch

        if self._indexed_matrix is None:
            raise ConfigError("an AdjacencyField must be indexed (field.index(vocab)) before it becomes a tensor")
        size = padding_lengths["num_tokens"]
        padded = np.full((size, size), self.pad_value, dtype=np.int64)
        kept = min(size, self.size)
        padded[:kept, :kept] = self._indexed_matrix[:kept, :kept]
        return torch.from_numpy(padded)

    def empty_field(self) -> AdjacencyField:
        sequence = self.sequence_field.empty_field() if hasattr(self.sequence_field, "empty_field") else []
        return AdjacencyField([], sequence, padding_value=self.pad_value)

    def human_readable_repr(self) -> dict[str, Any]:
        return {"indices": self.indices, "labels": self.labels}

    def __len__(self) -> int:
        return self.size

    def __str__(self) -> str:
        return f"AdjacencyField of length {self.size} with indices: {self.indices} and labels: {self.labels}."
