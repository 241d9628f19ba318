"""``allennlp.data.dataset_readers.multitask``: several named readers, each over its own data path; ``read`` gives
each reader's instances by name (the multi-task data loader batches them)."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from distrain.allennlp.data.dataset_readers.dataset_reader import DatasetReader

__all__ = ["MultiTaskDatasetReader"]


class MultiTaskDatasetReader(DatasetReader):
    def __init__(self, readers: Mapping[str, Any]) -> None:
        super().__init__()
        self.readers = dict(readers)

    def read(self, file_paths: Mapping[str, str]) -> dict[str, Iterator[Any]]:  # type: ignore[override]
        if set(file_paths) != set(self.readers):
            raise ValueError(f"MultiTaskDatasetReader: the paths name {sorted(file_paths)}, the readers "
                             f"{sorted(self.readers)}")
        return {name: self.readers[name].read(path) for name, path in file_paths.items()}

    def _read(self, file_path: str) -> Iterator[Any]:
        raise RuntimeError("MultiTaskDatasetReader reads through its readers: call read with a path per reader")
