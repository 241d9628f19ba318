"""The indexed dataset: one column per field, so a batch is a gather, not a Python loop.

Text becomes a ragged column (all ids in one flat array plus offsets); labels and feature vectors
become fixed-shape arrays. Columns are plain numpy arrays, so a saved dataset can be memory-mapped
by every worker instead of copied, and padding a batch is a handful of vectorised operations.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from distrain.data.fields import SUBCOLUMN, Field, flat_fields


class Column:
    kind: str

    def __len__(self) -> int:
        raise NotImplementedError

    def gather(self, indices: np.ndarray) -> Any:
        raise NotImplementedError


class FixedColumn(Column):
    kind = "fixed"

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def gather(self, indices: np.ndarray):
        import torch

        return torch.from_numpy(np.ascontiguousarray(self.values[indices]))


class _OffsetsColumn(Column):
    """A column whose item ``i`` spans ``offsets[i]:offsets[i+1]``: its length is that span."""

    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lengths(self, indices: np.ndarray | None = None) -> np.ndarray:
        lengths = np.diff(self.offsets)
        return lengths if indices is None else lengths[indices]


class RaggedColumn(_OffsetsColumn):
    """Variable-length sequences: ``values[offsets[i]:offsets[i+1]]`` is item ``i``."""

    kind = "ragged"

    def __init__(self, values: np.ndarray, offsets: np.ndarray, pad_value: int | float = 0) -> None:
        self.values = values
        self.offsets = offsets
        self.pad_value = pad_value

    def gather(self, indices: np.ndarray):
        import torch

        starts = self.offsets[indices]
        lengths = self.offsets[indices + 1] - starts
        width = int(lengths.max()) if len(lengths) else 0
        positions = np.arange(width)
        mask = positions[None, :] < lengths[:, None]
        source = np.where(mask, starts[:, None] + positions[None, :], 0)
        values = self.values[source] if len(self.values) else np.zeros(source.shape + self.values.shape[1:],
                                                                          self.values.dtype)
        keep = mask.reshape(mask.shape + (1,) * (values.ndim - 2))  # rows of offsets pairs pad whole
        padded = np.where(keep, values, self.pad_value)
        return torch.from_numpy(padded.astype(self.values.dtype, copy=False))


class NestedColumn(_OffsetsColumn):
    """Two-level ragged sequences (each token's characters): item ``i`` holds the rows
    ``offsets[i]:offsets[i+1]``, row ``r`` the values ``values[inner[r]:inner[r+1]]``. A batch is padded
    to its longest item and its longest row (at least ``min_width``), in one vectorised gather."""

    kind = "nested"

    def __init__(self, values: np.ndarray, offsets: np.ndarray, inner: np.ndarray, pad_value: int = 0,
                 min_width: int = 0) -> None:
        self.values, self.offsets, self.inner = values, offsets, inner
        self.pad_value, self.min_width = pad_value, min_width

    def gather(self, indices: np.ndarray):
        import torch

        starts = self.offsets[indices]
        rows = self.offsets[indices + 1] - starts
        height = int(rows.max()) if len(rows) else 0
        row_mask = np.arange(height)[None, :] < rows[:, None]
        row = np.where(row_mask, starts[:, None] + np.arange(height)[None, :], 0)
        row_starts = self.inner[row]
        widths = np.where(row_mask, self.inner[np.minimum(row + 1, len(self.inner) - 1)] - row_starts, 0)
        width = max(int(widths.max()) if widths.size else 0, self.min_width)
        mask = np.arange(width)[None, None, :] < widths[..., None]
        source = np.where(mask, row_starts[..., None] + np.arange(width)[None, None, :], 0)
        values = self.values[source] if len(self.values) else np.zeros(source.shape, np.int64)
        return torch.from_numpy(np.where(mask, values, self.pad_value).astype(np.int64, copy=False))


class PaddedColumn(_OffsetsColumn):
    """Items that are arrays of one rank and any shape (a list field's leaf): item ``i`` is
    ``values[offsets[i]:offsets[i+1]]`` shaped ``shapes[i]``. A batch pads every dimension to its largest (the
    last to at least ``min_width``)."""

    kind = "padded"

    def __init__(self, values: np.ndarray, offsets: np.ndarray, shapes: np.ndarray, pad_value: int | float = 0,
                 min_width: int = 0) -> None:
        self.values, self.offsets, self.shapes = values, offsets, shapes
        self.pad_value, self.min_width = pad_value, min_width

    def lengths(self, indices: np.ndarray | None = None) -> np.ndarray:
        """Each item's element count (its first dimension)."""
        counts = self.shapes[:, 0]
        return counts if indices is None else counts[indices]

    def gather(self, indices: np.ndarray):
        import torch

        from distrain.data.fields import pad_arrays

        items = [np.asarray(self.values[self.offsets[i]: self.offsets[i + 1]]).reshape(self.shapes[i])
                 for i in indices]
        return torch.from_numpy(pad_arrays(items, self.pad_value, self.min_width))


def padded_arrays(items: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrays of one rank → their values flat, the items' offsets into them and the items' shapes."""
    lengths = np.fromiter((item.size for item in items), dtype=np.int64, count=len(items))
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = np.concatenate([item.ravel() for item in items]) if items else np.zeros(0, dtype=np.int64)
    shapes = np.asarray([item.shape for item in items], dtype=np.int64).reshape(len(items), -1)
    return values, offsets, shapes


class ObjectColumn(Column):
    kind = "object"

    def __init__(self, values: list) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def gather(self, indices: np.ndarray) -> list:
        return [self.values[i] for i in indices]


class IndexedDataset:
    """Columns of equal length; ``batch(indices)`` returns the model's keyword arguments."""

    def __init__(self, columns: dict[str, Column]) -> None:
        sizes = {len(column) for column in columns.values()}
        if len(sizes) > 1:
            raise ValueError(f"columns differ in length: { {k: len(c) for k, c in columns.items()} }")
        self.columns = columns
        self._size = sizes.pop() if sizes else 0
        #: the directory this dataset was memory-mapped from, if any
        self.source: Path | None = None

    def __reduce_ex__(self, protocol):
        # A memory-mapped dataset travels to spawned workers as its path: each maps the same pages
        # instead of unpickling a private copy.
        if self.source is not None:
            return (IndexedDataset.load, (str(self.source), True))
        return super().__reduce_ex__(protocol)

    def __len__(self) -> int:
        return self._size

    def field_names(self) -> list[str]:
        """The fields every item holds (the keyword arguments :meth:`batch` gives), in column order."""
        return list(dict.fromkeys(name.split(SUBCOLUMN)[0] for name in self.columns))

    def batch(self, indices: np.ndarray) -> dict[str, Any]:
        """The model's keyword arguments; a text field's sub-columns nest as ``{field: {indexer: {key: t}}}``."""
        batch: dict[str, Any] = {}
        for name, column in self.columns.items():
            *outer, key = name.split(SUBCOLUMN)
            target = batch
            for part in outer:
                target = target.setdefault(part, {})
            target[key] = column.gather(indices)
        return batch

    def field_lengths(self, name: str | None) -> np.ndarray:
        """Each item's length in field ``name`` (AllenNLP's ``sorting_keys`` name fields): its sequence column,
        or the longest of its sub-columns ``name::indexer::key``, as a text field with token indexers is
        stored; 1 for a fixed-size field); ``None``: :meth:`lengths`. KeyError for an unknown field."""
        if name is None:
            return self.lengths()
        parts = [column for key, column in self.columns.items() if key == name or key.startswith(name + SUBCOLUMN)]
        if not parts:
            raise KeyError(name)
        ragged = [column.lengths() for column in parts if isinstance(column, (RaggedColumn, NestedColumn))]
        return np.max(np.stack(ragged), axis=0) if ragged else np.ones(len(self), dtype=np.int64)

    def lengths(self) -> np.ndarray:
        """The longest ragged field of each item (for bucketing and token budgets); ones if none."""
        ragged = [column.lengths() for column in self.columns.values() if isinstance(column, (RaggedColumn, NestedColumn))]
        if not ragged:
            return np.ones(len(self), dtype=np.int64)
        return np.max(np.stack(ragged), axis=0)

    # ------------------------------------------------------------------------------- building
    @classmethod
    def from_instances(cls, instances: Iterable[dict[str, Field]], vocab: Any) -> IndexedDataset:
        values: dict[str, list] = {}
        kinds: dict[str, str] = {}
        pads: dict[str, Any] = {}
        widths: dict[str, int] = {}
        for position, instance in enumerate(instances):
            instance = flat_fields(instance, vocab)
            if position == 0:
                kinds = {name: field.column_kind for name, field in instance.items()}
                pads = {name: field.pad_value for name, field in instance.items()}
                widths = {name: getattr(field, "min_width", 0) for name, field in instance.items()}
                values = {name: [] for name in instance}
            elif instance.keys() != kinds.keys():
                raise ValueError(
                    f"instance {position} has fields {sorted(instance)}, the first had {sorted(kinds)}"
                )
            for name, field in instance.items():
                values[name].append(field.index(vocab))
        columns: dict[str, Column] = {}
        for name, items in values.items():
            kind = kinds[name]
            if kind == "nested":
                flat, row_counts, row_widths = _nested_arrays(items)
                columns[name] = NestedColumn(flat, row_counts, row_widths, pads[name], widths[name])
            elif kind == "ragged":
                lengths = np.fromiter((len(item) for item in items), dtype=np.int64, count=len(items))
                offsets = np.zeros(len(items) + 1, dtype=np.int64)
                np.cumsum(lengths, out=offsets[1:])
                flat = np.concatenate(items) if items else np.zeros(0, dtype=np.int64)
                columns[name] = RaggedColumn(flat, offsets, pads[name])
            elif kind == "fixed":
                columns[name] = FixedColumn(np.stack(items) if items else np.zeros(0))
            elif kind == "padded":
                columns[name] = PaddedColumn(*padded_arrays(items), pads[name], widths[name])
            else:
                columns[name] = ObjectColumn(items)
        return cls(columns)

    # ---------------------------------------------------------------------------- persistence
    def save(self, directory: str | Path) -> None:
        """Write each array as ``.npy`` so :meth:`load` can memory-map it."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        layout: dict[str, dict] = {}
        for name, column in self.columns.items():
            if isinstance(column, NestedColumn):
                for part in ("values", "offsets", "inner"):
                    np.save(directory / f"{name}.{part}.npy", getattr(column, part))
                layout[name] = {"kind": "nested", "pad_value": column.pad_value, "min_width": column.min_width}
            elif isinstance(column, RaggedColumn):
                np.save(directory / f"{name}.values.npy", column.values)
                np.save(directory / f"{name}.offsets.npy", column.offsets)
                layout[name] = {"kind": "ragged", "pad_value": column.pad_value}
            elif isinstance(column, FixedColumn):
                np.save(directory / f"{name}.npy", column.values)
                layout[name] = {"kind": "fixed"}
            elif isinstance(column, PaddedColumn):
                for part in ("values", "offsets", "shapes"):
                    np.save(directory / f"{name}.{part}.npy", getattr(column, part))
                layout[name] = {"kind": "padded", "pad_value": column.pad_value, "min_width": column.min_width}
            else:
                (directory / f"{name}.pkl").write_bytes(pickle.dumps(column.values))
                layout[name] = {"kind": "object"}
        (directory / "layout.json").write_text(json.dumps(layout))

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = True) -> IndexedDataset:
        directory = Path(directory)
        layout = json.loads((directory / "layout.json").read_text())
        mode = "r" if mmap else None
        columns: dict[str, Column] = {}
        for name, spec in layout.items():
            if spec["kind"] == "nested":
                parts = [np.load(directory / f"{name}.{part}.npy", mmap_mode=mode) for part in ("values", "offsets", "inner")]
                columns[name] = NestedColumn(*parts, spec["pad_value"], spec["min_width"])
            elif spec["kind"] == "ragged":
                columns[name] = RaggedColumn(
                    np.load(directory / f"{name}.values.npy", mmap_mode=mode),
                    np.load(directory / f"{name}.offsets.npy", mmap_mode=mode),
                    spec["pad_value"],
                )
            elif spec["kind"] == "fixed":
                columns[name] = FixedColumn(np.load(directory / f"{name}.npy", mmap_mode=mode))
            elif spec["kind"] == "padded":
                parts = [np.load(directory / f"{name}.{part}.npy", mmap_mode=mode) for part in ("values", "offsets", "shapes")]
                columns[name] = PaddedColumn(*parts, spec["pad_value"], spec["min_width"])
            else:
                # Our own cache file, written above by this process's parent; never user input.
                columns[name] = ObjectColumn(pickle.loads((directory / f"{name}.pkl").read_bytes()))
        dataset = cls(columns)
        if mmap:
            dataset.source = directory
        return dataset


def _nested_arrays(items: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(flat values, row lengths)`` per item → values, item offsets into rows, row offsets into values."""
    row_lengths = [lengths for _, lengths in items]
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(lengths) for lengths in row_lengths], out=offsets[1:])
    all_rows = np.concatenate(row_lengths) if row_lengths else np.zeros(0, dtype=np.int64)
    inner = np.zeros(len(all_rows) + 1, dtype=np.int64)
    np.cumsum(all_rows, out=inner[1:])
    values = np.concatenate([flat for flat, _ in items]) if items else np.zeros(0, dtype=np.int64)
    return values.astype(np.int64), offsets, inner
