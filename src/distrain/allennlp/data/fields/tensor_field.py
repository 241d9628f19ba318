"""``allennlp.data.fields.tensor_field``: AllenNLP's ``TensorField`` (``ArrayField`` is its older name), distrain's
array field under AllenNLP's API.

It holds a tensor or array as it is (``dtype`` converts it; without it the dtype is kept, as AllenNLP kept it),
pads every dimension with ``padding_value`` to the batch's largest in distrain's loader, and field by field to the
``dimension_<i>`` lengths it is given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distrain.allennlp.data.fields.field import Field, same_value
from distrain.data.field import ArrayField as DistrainArrayField

__all__ = ["ArrayField", "TensorField"]


def _as_numpy(tensor: Any, dtype: Any) -> np.ndarray:
    if hasattr(tensor, "detach"):
        tensor = tensor.detach().cpu().numpy()
    return np.asarray(tensor, dtype=dtype)


class TensorField(DistrainArrayField, Field):
    flatten = None  # distrain's own protocol indexes it

    def __init__(self, tensor: Any, padding_value: Any = 0.0, dtype: Any = None, pad_value: Any = None,
                 column_kind: str | None = None, min_width: int = 0) -> None:
        if dtype is not None and hasattr(dtype, "is_floating_point"):  # a torch dtype
            import torch

            dtype = torch.empty(0, dtype=dtype).numpy().dtype
        values = tensor if column_kind == "nested" else _as_numpy(tensor, dtype)
        super().__init__(values, padding_value, column_kind, min_width, None, pad_value)

    @property
    def tensor(self) -> Any:
        import torch

        return torch.as_tensor(np.array(self.values))

    def get_padding_lengths(self) -> dict[str, int]:
        return {f"dimension_{i}": size for i, size in enumerate(np.shape(self.values))}

    def as_tensor(self, padding_lengths: dict[str, int]) -> Any:
        import torch

        values = np.asarray(self.values)
        rank = sum(key.startswith("dimension_") for key in padding_lengths)
        if rank == 0 and values.ndim == 0:
            return torch.as_tensor(np.array(values))
        shape = [padding_lengths[f"dimension_{i}"] for i in range(rank)]
        padded = np.full(shape, self.pad_value, dtype=values.dtype)
        if values.size:
            values = values.reshape(values.shape + (1,) * (rank - values.ndim)) if values.ndim < rank else values
            padded[tuple(slice(0, min(size, limit)) for size, limit in zip(values.shape, shape))] = \
                values[tuple(slice(0, limit) for limit in shape)]
        return torch.as_tensor(padded)

    def empty_field(self) -> TensorField:
        return TensorField(np.zeros(0, dtype=np.asarray(self.values).dtype), self.pad_value)

    def human_readable_repr(self) -> dict[str, Any]:
        values = np.asarray(self.values)
        return {"shape": list(values.shape), "element_mean": float(values.mean()) if values.size else 0.0,
                "element_std": float(values.std()) if values.size else 0.0, "type": str(values.dtype)}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorField):
            return same_value(np.asarray(self.values), np.asarray(other.values)) and \
                self.pad_value == other.pad_value
        return DistrainArrayField.__eq__(self, other)

    __hash__ = Field.__hash__

    def __len__(self) -> int:
        return 1 if np.ndim(self.values) == 0 else len(self.values)

    def __str__(self) -> str:
        return f"TensorField with shape: {np.shape(self.values)} and dtype: {np.asarray(self.values).dtype}."


ArrayField = TensorField
