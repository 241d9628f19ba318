"""Write an indexed dataset to disk as instances arrive, so memory stays bounded by one chunk.

:class:`IndexedDatasetWriter` produces exactly the files :meth:`IndexedDataset.save` writes for
``IndexedDataset.from_instances(instances, vocab)`` (same arrays, same ``.npy`` headers, same
``layout.json``), but holds only ``chunk_size`` indexed instances at a time: each ``.npy`` file is
opened with room for its header, the rows are appended chunk by chunk, and the header (whose shape is
known only at the end) is written last. Object columns (``MetadataField``) are the exception: they
are pickled as one list, so they stay in memory until :meth:`close`.
"""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from distrain.data.dataset import padded_arrays
from distrain.data.fields import Field, flat_fields

#: bytes reserved for a ``.npy`` header: numpy pads its version 1.0 header to a multiple of 64, and
#: a one- or two-dimensional shape below 10**15 rows fits in 128
HEADER_BYTES = 128


def npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The header ``np.save`` writes for an array of ``dtype`` and ``shape``."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def padded_header(dtype: np.dtype, shape: tuple[int, ...], size: int) -> bytes:
    """A valid header of exactly ``size`` bytes (numpy's own when it has that length)."""
    header = npy_header(dtype, shape)
    if len(header) == size:
        return header
    text = repr({"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape})
    body_size = size - 10  # magic (6) + version (2) + length (2)
    if len(text) + 1 > body_size:
        raise ValueError(f"array shape {shape} does not fit a {size}-byte .npy header")
    body = text.ljust(body_size - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + body_size.to_bytes(2, "little") + body.encode("latin1")


class ArrayFileWriter:
    """A ``.npy`` file grown row block by row block along its first axis."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: BinaryIO = open(path, "wb")
        self.file.write(b"\0" * HEADER_BYTES)
        self.dtype: np.dtype | None = None
        self.row_shape: tuple[int, ...] = ()
        self.rows = 0

    def append(self, block: np.ndarray) -> None:
        if self.dtype is None:
            self.dtype, self.row_shape = block.dtype, block.shape[1:]
        elif block.dtype != self.dtype or block.shape[1:] != self.row_shape:
            raise ValueError(f"{self.path.name}: rows of {block.dtype}{list(block.shape[1:])} after "
                             f"{self.dtype}{list(self.row_shape)}; every instance must index to the same kind")
        self.file.write(memoryview(np.ascontiguousarray(block)).cast("B"))
        self.rows += len(block)

    def close(self, empty_dtype: Any) -> None:
        dtype = self.dtype if self.dtype is not None else np.dtype(empty_dtype)
        header = npy_header(dtype, (self.rows, *self.row_shape))
        if len(header) == HEADER_BYTES:
            self.file.seek(0)
            self.file.write(header)
            self.file.close()
            return
        # an unusual shape needs a longer header: move the rows behind it (rare, and still streamed)
        self.file.close()
        data = self.path.with_name(self.path.name + ".rows")
        self.path.rename(data)
        with open(data, "rb") as source, open(self.path, "wb") as target:
            source.seek(HEADER_BYTES)
            target.write(header)
            while block := source.read(1 << 24):
                target.write(block)
        data.unlink()


class IndexedDatasetWriter:
    """``add`` instances one by one; ``close`` finishes the files and returns how many were written."""

    def __init__(self, directory: str | Path, vocab: Any, chunk_size: int = 8192) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.vocab = vocab
        self.chunk_size = chunk_size
        self.count = 0
        self.kinds: dict[str, str] = {}
        self.pads: dict[str, Any] = {}
        self.pending: dict[str, list] = {}
        self.objects: dict[str, list] = {}
        self.files: dict[str, ArrayFileWriter] = {}
        self.offset_totals: dict[str, int] = {}
        self.widths: dict[str, int] = {}

    def add(self, instance: dict[str, Field]) -> None:
        instance = flat_fields(instance, self.vocab)
        if self.count == 0:
            self._start(instance)
        elif instance.keys() != self.kinds.keys():
            raise ValueError(f"instance {self.count} has fields {sorted(instance)}, the first had {sorted(self.kinds)}")
        for name, field in instance.items():
            if self.kinds[name] == "object":
                self.objects[name].append(field.index(self.vocab))
            else:
                self.pending[name].append(field.index(self.vocab))
        self.count += 1
        if self.count % self.chunk_size == 0:
            self._flush()

    def _start(self, instance: dict[str, Field]) -> None:
        for name, field in instance.items():
            kind = field.column_kind
            self.kinds[name] = kind
            self.pads[name] = field.pad_value
            self.widths[name] = getattr(field, "min_width", 0)
            if kind == "nested":
                for part in ("values", "offsets", "inner"):
                    self.files[f"{name}.{part}"] = ArrayFileWriter(self.directory / f"{name}.{part}.npy")
                self.files[f"{name}.offsets"].append(np.zeros(1, dtype=np.int64))
                self.files[f"{name}.inner"].append(np.zeros(1, dtype=np.int64))
                self.offset_totals[name] = 0
                self.offset_totals[f"{name}.inner"] = 0
                self.pending[name] = []
            elif kind == "ragged":
                self.files[f"{name}.values"] = ArrayFileWriter(self.directory / f"{name}.values.npy")
                offsets = ArrayFileWriter(self.directory / f"{name}.offsets.npy")
                offsets.append(np.zeros(1, dtype=np.int64))
                self.files[f"{name}.offsets"] = offsets
                self.offset_totals[name] = 0
                self.pending[name] = []
            elif kind == "padded":
                for part in ("values", "offsets", "shapes"):
                    self.files[f"{name}.{part}"] = ArrayFileWriter(self.directory / f"{name}.{part}.npy")
                self.files[f"{name}.offsets"].append(np.zeros(1, dtype=np.int64))
                self.offset_totals[name] = 0
                self.pending[name] = []
            elif kind == "fixed":
                self.files[name] = ArrayFileWriter(self.directory / f"{name}.npy")
                self.pending[name] = []
            else:
                self.objects[name] = []

    def _flush(self) -> None:
        for name, items in self.pending.items():
            if not items:
                continue
            if self.kinds[name] == "nested":
                self._flush_nested(name, items)
            elif self.kinds[name] == "padded":
                values, offsets, shapes = padded_arrays([np.asarray(item) for item in items])
                self.files[f"{name}.values"].append(values)
                self.files[f"{name}.offsets"].append(offsets[1:] + self.offset_totals[name])
                self.files[f"{name}.shapes"].append(shapes)
                self.offset_totals[name] += int(offsets[-1])
            elif self.kinds[name] == "ragged":
                lengths = np.fromiter((len(item) for item in items), dtype=np.int64, count=len(items))
                offsets = np.cumsum(lengths) + self.offset_totals[name]
                self.offset_totals[name] = int(offsets[-1])
                self.files[f"{name}.values"].append(np.concatenate(items))
                self.files[f"{name}.offsets"].append(offsets)
            else:
                self.files[name].append(np.stack(items))
            items.clear()

    def _flush_nested(self, name: str, items: list) -> None:
        """Items are ``(flat values, row lengths)``: append values, item offsets and row offsets."""
        rows = np.fromiter((len(lengths) for _, lengths in items), dtype=np.int64, count=len(items))
        offsets = np.cumsum(rows) + self.offset_totals[name]
        self.offset_totals[name] = int(offsets[-1])
        row_lengths = np.concatenate([lengths for _, lengths in items]).astype(np.int64)
        inner = np.cumsum(row_lengths) + self.offset_totals[f"{name}.inner"]
        if len(inner):
            self.offset_totals[f"{name}.inner"] = int(inner[-1])
        self.files[f"{name}.values"].append(np.concatenate([flat for flat, _ in items]).astype(np.int64))
        self.files[f"{name}.offsets"].append(offsets)
        self.files[f"{name}.inner"].append(inner)

    def close(self) -> int:
        self._flush()
        layout: dict[str, dict] = {}
        for name, kind in self.kinds.items():
            if kind == "nested":
                for part in ("values", "offsets", "inner"):
                    self.files[f"{name}.{part}"].close(np.int64)
                layout[name] = {"kind": "nested", "pad_value": self.pads[name], "min_width": self.widths[name]}
            elif kind == "ragged":
                self.files[f"{name}.values"].close(np.int64)
                self.files[f"{name}.offsets"].close(np.int64)
                layout[name] = {"kind": "ragged", "pad_value": self.pads[name]}
            elif kind == "padded":
                for part in ("values", "offsets", "shapes"):
                    self.files[f"{name}.{part}"].close(np.int64)
                layout[name] = {"kind": "padded", "pad_value": self.pads[name], "min_width": self.widths[name]}
            elif kind == "fixed":
                self.files[name].close(np.float64)
                layout[name] = {"kind": "fixed"}
            else:
                (self.directory / f"{name}.pkl").write_bytes(pickle.dumps(self.objects[name]))
                layout[name] = {"kind": "object"}
        (self.directory / "layout.json").write_text(json.dumps(layout))
        return self.count

    def abort(self) -> None:
        for writer in self.files.values():
            if not writer.file.closed:
                writer.file.close()
