"""Shard files dealt to readers: ``{"type": "sharded", "base_reader": {...}}``.

The data path is a glob (``data/train-*.jsonl``), a directory (every file in it) or a ``.tar.gz`` /
``.tgz`` / ``.tar`` of shard files, in sorted name order. Reader ``i`` of ``n`` (rank-major over
ranks × loader processes, see :class:`~distrain.data.reader.ReaderShard`) reads shards
``i, i+n, i+2n, ...`` whole, with the base reader, and never opens the others. Fewer shards than
readers is an error naming both counts: splitting a shard among readers would make every reader
scan it, which is what sharding is meant to avoid (split the data finer with ``distrain shard``).
"""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path
from typing import Iterator

from distrain.data.cache import input_files
from distrain.data.reader import WHOLE, DataError, DatasetReader

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


def is_archive(path: str | Path) -> bool:
    return str(path).endswith(ARCHIVE_SUFFIXES) and Path(path).is_file()


@DatasetReader.register("sharded")
class ShardedDatasetReader(DatasetReader):
    """Deals whole shard files (a glob, a directory or a .tar.gz) to the job's readers; see the module doc."""

    distributed_aware = True

    def __init__(self, base_reader: DatasetReader, **kwargs) -> None:
        super().__init__(**kwargs)
        self.base_reader = base_reader

    def check_path(self, path: str | Path) -> None:
        if not is_archive(path) and not input_files(path):
            raise DataError(f"no shard files match {path} (expected a glob, a directory or a .tar.gz of shards)")

    def check_shares(self, path: str | Path, readers: int) -> None:
        if is_archive(path):
            with tarfile.open(path) as tar:
                count = sum(1 for m in tar.getmembers() if m.isfile() and not Path(m.name).name.startswith("."))
        else:
            count = sum(1 for f in input_files(path) if not f.name.startswith("."))
        if readers > count:
            raise DataError(
                f"{path}: {count} shard file(s) for {readers} readers (workers x loader processes); "
                f"use at least as many shards as readers (distrain shard FILE --num-shards {readers})"
            )

    def _read(self, path: Path) -> Iterator[dict]:
        if is_archive(path):
            with tempfile.TemporaryDirectory(prefix="distrain-shards-") as folder:
                yield from self._read_shards(self._extract(path, Path(folder)))
        else:
            files = [f for f in input_files(path) if not f.name.startswith(".")]
            yield from self._read_shards(self._deal(files, str(path)))

    def _extract(self, archive: Path, folder: Path) -> list[Path]:
        """Only this reader's members are written out; the filter refuses links and absolute paths."""
        with tarfile.open(archive) as tar:
            members = sorted(
                (m for m in tar.getmembers() if m.isfile() and not Path(m.name).name.startswith(".")),
                key=lambda m: m.name,
            )
            mine = self._deal(members, str(archive))
            tar.extractall(folder, members=mine, filter="data")
        return [folder / member.name for member in mine]

    def _deal(self, shards: list, where: str) -> list:
        shard = self.shard
        if not shards:
            raise DataError(f"{where}: no shard files")
        if shard.count > len(shards):
            raise DataError(
                f"{where}: {len(shards)} shard file(s) for {shard.count} readers "
                f"({shard.world_size} worker(s) x {shard.num_workers} loader process(es)); "
                f"use at least as many shards as readers (distrain shard FILE --num-shards {shard.count})"
            )
        return shards[shard.index :: shard.count]

    def _read_shards(self, mine: list[Path]) -> Iterator[dict]:
        self.base_reader.set_shard(WHOLE)
        for shard_file in mine:
            yield from self.base_reader.read(shard_file)
            self.num_parsed += self.base_reader.num_parsed
            self.num_skipped += self.base_reader.num_skipped

    def text_to_instance(self, *args, **kwargs) -> dict:
        return self.base_reader.text_to_instance(*args, **kwargs)

    def record_to_instance(self, record: dict) -> dict:
        return self.base_reader.record_to_instance(record)

    def input_fields(self) -> dict[str, str]:
        return self.base_reader.input_fields()
