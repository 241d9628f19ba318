"""Any ``datasets`` source that works offline: ``{"type": "huggingface", "fields": {...}}``.

The data path is a file or glob (format from its suffix: json/jsonl, csv, parquet, arrow, txt, or
``format``), or a directory written by ``Dataset.save_to_disk`` (read with ``load_from_disk``).
``fields`` maps each instance field to a column and a kind::

    "fields": {"tokens": {"column": "review"}, "label": {"column": "rating", "kind": "label"}}

Shares: a map-style dataset is cut into contiguous index ranges (``Dataset.shard``, memory-mapped
Arrow, other rows never decoded); with ``streaming`` the iterable dataset is split per reader with
``datasets.distributed.split_dataset_by_node`` (whole files per reader when the file count divides
evenly, otherwise every reader scans and keeps one example in ``count``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal

from annotated_types import MinLen

from distrain.data.cache import input_files
from distrain.data.fields import LabelField, MetadataField, TensorField, TextField, TokenIdsField
from distrain.data.reader import DataError, DatasetReader
from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers.words_and_punctuation import WordTokenizer

SUFFIX_FORMATS = {".json": "json", ".jsonl": "json", ".csv": "csv", ".parquet": "parquet",
                  ".arrow": "arrow", ".txt": "text"}


@dataclass
class ColumnField:
    """Which column fills a field, and as what: ``text`` is tokenised; ``token_ids`` taken as is."""

    column: str
    kind: Literal["text", "label", "tensor", "token_ids", "metadata"] = "text"
    namespace: str | None = None


@DatasetReader.register("huggingface")
class HuggingfaceReader(DatasetReader):
    """Reads json/csv/parquet/arrow files or a saved dataset through ``datasets``; see the module doc."""

    distributed_aware = True

    def __init__(
        self,
        fields: Annotated[dict[str, ColumnField], MinLen(1)],
        format: Literal["json", "csv", "parquet", "arrow", "text"] | None = None,
        split: str = "train",
        streaming: bool = False,
        tokenizer: Tokenizer | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.fields = fields
        self.format = format
        self.split = split
        self.streaming = streaming
        self.tokenizer = tokenizer or WordTokenizer()

    @classmethod
    def declared_fields(cls, arguments):
        return {name: True for name in arguments["fields"]}

    def check_path(self, path: str | Path) -> None:
        if not Path(path).is_dir() and not input_files(path):
            raise DataError(f"data file not found: {path}")

    def _read(self, path: Path) -> Iterator[dict]:
        dataset = self._load(path)
        missing = [f.column for f in self.fields.values() if f.column not in (dataset.column_names or [])]
        if missing and dataset.column_names is not None:
            raise DataError(f"{path}: no column(s) {', '.join(map(repr, missing))}; "
                            f"columns are {', '.join(dataset.column_names)}")
        shard = self.shard
        start = 0
        if shard.count > 1:
            if self.streaming:
                from datasets.distributed import split_dataset_by_node

                dataset = split_dataset_by_node(dataset, rank=shard.index, world_size=shard.count)
            else:
                start = _contiguous_start(len(dataset), shard.count, shard.index)
                dataset = dataset.shard(num_shards=shard.count, index=shard.index, contiguous=True)
        for row_number, row in enumerate(dataset, start=start + 1):
            self.num_parsed += 1
            try:
                instance = self.row_to_instance(row)
            except (TypeError, ValueError) as error:
                self.invalid(path, row_number, str(error))
                continue
            yield instance

    def _load(self, path: Path):
        import datasets

        if path.is_dir() and ((path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists()):
            loaded = datasets.load_from_disk(str(path))
            if isinstance(loaded, datasets.DatasetDict):
                loaded = loaded[self.split]
            return loaded.to_iterable_dataset() if self.streaming else loaded
        files = [str(f) for f in input_files(path)]
        builder = self.format or SUFFIX_FORMATS.get(Path(files[0]).suffix if files else "", None)
        if builder is None:
            raise DataError(f"{path}: cannot tell the format from the suffix; set the reader's \"format\"")
        return datasets.load_dataset(builder, data_files=files, split="train", streaming=self.streaming)

    def row_to_instance(self, row: dict[str, Any]) -> dict:
        instance = {}
        for name, spec in self.fields.items():
            value = row[spec.column]
            if spec.kind == "text":
                if not isinstance(value, str):
                    raise ValueError(f'column "{spec.column}" must be a string, got {type(value).__name__}')
                instance[name] = TextField(self.tokenizer.tokenize(value), namespace=spec.namespace or "tokens")
            elif spec.kind == "label":
                if value is None:
                    raise ValueError(f'column "{spec.column}" is empty')
                instance[name] = LabelField(str(value), spec.namespace or "labels")
            elif spec.kind == "tensor":
                instance[name] = TensorField(value)
            elif spec.kind == "token_ids":
                instance[name] = TokenIdsField(value)
            else:
                instance[name] = MetadataField(value)
        return instance

    def text_to_instance(self, **row: Any) -> dict:
        return self.row_to_instance(row)


def _contiguous_start(size: int, count: int, index: int) -> int:
    """Where ``Dataset.shard(contiguous=True)`` starts share ``index`` (for row numbers in errors)."""
    base, extra = divmod(size, count)
    return index * base + min(index, extra)
