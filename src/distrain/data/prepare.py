"""Read the data once: every split read and indexed, the vocabulary built, through the shared cache.

The parent of spawned workers calls :func:`prepare_data` before starting them, so workers only map
the result; under torchrun each rank calls it with its world and rank 0 builds the cache entry.
It takes a :class:`DataPlan` (the readers, paths, loaders and vocabulary settings of an experiment,
made by :attr:`distrain.experiment.plan.ResolvedExperiment.data_plan`), not the experiment: nothing here
builds a model or looks at the trainer.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distrain.config.errors import ConfigError, Problem
from distrain.data.cache import DatasetCache, cache_root, fingerprint
from distrain.data.dataset import IndexedDataset
from distrain.data.dataset_writer import IndexedDatasetWriter
from distrain.data.fields import Field
from distrain.data.loader import DataLoader, DataLoaderConfig
from distrain.data.reader import DataError, DatasetReader, ReaderShard
from distrain.data.streaming import StreamingLoader, StreamingSource
from distrain.data.vocabulary import UnknownLabel, Vocabulary, VocabularyConfig
from distrain.data.vocabulary_files import base_vocabulary, fixed_vocabulary, vocabulary_files
from distrain.distributed.collectives import broadcast_object
from distrain.distributed.world import World

logger = logging.getLogger(__name__)


@dataclass
class PreparedData:
    """The vocabulary and each split: an IndexedDataset (memory-mapped when cached), a
    :class:`~distrain.data.streaming.StreamingSource` for a ``lazy`` loader, or None."""

    vocab: Any
    train: Any
    validation: Any | None
    test: Any | None = None

    def loader(self, split: str, reader: DatasetReader, config: DataLoaderConfig, world: World, seed: int) -> Any:
        """A worker's loader over one split (``"train"``, ``"validation"``, ``"test"``): a global-batch loader
        over an indexed split, or a streaming loader over a lazy one."""
        data = getattr(self, split)
        if isinstance(data, StreamingSource):
            return StreamingLoader(data, reader, self.vocab, config, world, seed)
        return DataLoader(data, config, world, seed)


@dataclass
class DataSplit:
    """One split of the data: where it is read from, by which reader, and the loader it will feed."""

    name: str
    reader: DatasetReader
    path: str | None
    loader: DataLoaderConfig

    @property
    def lazy(self) -> bool:
        """Streamed by its loader (counted here, read during training) instead of indexed."""
        return bool(getattr(self.loader, "lazy", False))


@dataclass
class DataPlan:
    """What reading the data needs from an experiment: its splits, vocabulary settings and cache key."""

    train: DataSplit
    validation: DataSplit
    vocabulary: VocabularyConfig
    #: processes that read and count each split (the loader's ``num_workers``)
    read_workers: int = 0
    #: the data keys of the evaluated config, part of the cache key; None: no cache
    cache_config: dict[str, Any] | None = None
    #: data-parallel workers a streamed split is shared by (when no world is given)
    dp_size: int = 1
    #: ``test_data_path``, read with the validation reader and loader
    test: DataSplit | None = None
    #: the splits whose tokens make the vocabulary (``datasets_for_vocab_creation``; None: every split, as AllenNLP)
    vocabulary_splits: tuple[str, ...] | None = None
    #: the archive a ``from_archive`` model comes from: its vocabulary is the one the data extends
    model_archive: str | None = None

    @property
    def splits(self) -> tuple[DataSplit, ...]:
        return (self.train, self.validation) + ((self.test,) if self.test is not None else ())


def prepare_data(plan: DataPlan, world: World | None = None) -> PreparedData:
    """Read and index the data once, through the shared cache when the plan has a cache key.

    With a cache entry for this data the files are not read again. Under torchrun (``world``
    distributed, no parent) rank 0 builds the entry while the others wait, then all map it.
    """
    _check_streamed_shares(plan, world)
    cache, key = _cache_and_key(plan)
    if cache is None:
        vocab, splits = read_data(plan)
        return PreparedData(vocab, splits["train"], splits.get("validation"), splits.get("test"))
    if world is not None and world.is_distributed:
        problem: Exception | None = None
        if world.is_primary:
            try:
                _open_entry(plan, cache, key)
            except Exception as error:  # noqa: BLE001 - told to the waiting ranks, then re-raised
                problem = error
        # Doubles as the barrier: the other ranks wait here until rank 0 has built the entry or failed.
        failure = broadcast_object(None if problem is None else str(problem))
        if problem is not None:
            raise problem
        if failure is not None:
            raise DataError(f"rank 0 could not prepare the data: {failure}")
    entry = _open_entry(plan, cache, key)
    vocab, splits = cache.load(entry)
    splits = {split.name: _streaming_source_or(splits.get(split.name), split, entry) for split in plan.splits}
    return PreparedData(vocab, splits["train"], splits.get("validation"), splits.get("test"))


def _open_entry(plan: DataPlan, cache: Any, key: str) -> Any:
    """The verified entry for ``key``: reused, or built once (concurrent runs wait for the builder)."""
    started = time.monotonic()
    entry, built = cache.open(key, lambda directory: _build_entry(plan, directory))
    if built:
        logger.info("read the data in %.1f s and cached it in %s", time.monotonic() - started, entry)
    else:
        logger.info("dataset cache hit: %s (data not re-read; DISTRAIN_CACHE=off to disable)", entry)
    return entry


def _cache_and_key(plan: DataPlan):
    root = cache_root()
    if root is None or plan.cache_config is None:
        return None, None
    data_config = dict(plan.cache_config)
    data_config["lazy"] = [split.lazy for split in plan.splits]
    data_config["read_workers"] = plan.read_workers
    paths = [split.path for split in plan.splits if split.path] + vocabulary_files(plan.vocabulary, plan.model_archive)
    readers = [split.reader for split in plan.splits]
    # the readers' code, and the vocabulary's rules and this module's (VocabularyConfig, DataPlan): a change to how
    # data is read, counted or indexed invalidates what was cached under the old rules
    return DatasetCache(root), fingerprint(data_config, paths, code=[*readers, plan.vocabulary, plan])


def _build_entry(plan: DataPlan, directory: Any) -> dict[str, Any]:
    """Write the entry's files into ``directory``; return its meta."""
    _vocab, splits = read_data(plan, directory)
    return {
        "train_data_path": plan.train.path,
        "validation_data_path": plan.validation.path,
        "splits": {name: (len(split) if split is not None and not _is_streamed(split) else None)
                   for name, split in splits.items()},
        "streaming_counts": {name: split.num_instances for name, split in splits.items() if _is_streamed(split)},
    }


def _is_streamed(split: Any) -> bool:
    return isinstance(split, StreamingSource)


def _streaming_source_or(loaded: Any, split: DataSplit, entry: Any) -> Any:
    """A lazy split is cached as its vocabulary and count only; rebuild its source from the meta."""
    counts = json.loads((entry / "meta.json").read_text()).get("streaming_counts", {})
    if split.name in counts:
        return StreamingSource(str(split.path), counts[split.name])
    return loaded


def read_data(plan: DataPlan, directory: Any = None) -> tuple[Any, dict[str, Any]]:
    """Read every split and build the vocabulary. Token namespaces come from the splits the plan names (every
    split by default, as AllenNLP's ``datasets_for_vocab_creation``); label namespaces from every split, so an
    unseen validation label does not crash indexing.
    A split whose loader is ``lazy`` is only counted here (memory stays flat) and streamed later.

    Memory stays bounded by a chunk of instances, whatever the input size: a first pass counts the
    vocabulary items, a second indexes each instance into the columnar files as it is read. When no
    field adds to the vocabulary (a pretrained tokenizer's ids), the data is read once. With
    ``directory`` the vocabulary and splits are written there and returned memory-mapped; without
    it they are built in a temporary folder and loaded into memory."""
    with tempfile.TemporaryDirectory(prefix="distrain-index-") as scratch:
        folder = Path(directory) if directory is not None else Path(scratch)
        vocab, counts, how = _index_in_one_pass(plan, folder) or _count_then_index(plan, folder)
        vocab.save(folder / "vocabulary")
        result: dict[str, Any] = {}
        for split in plan.splits:
            if not counts[split.name]:
                result[split.name] = None
            elif split.path and split.lazy:
                result[split.name] = StreamingSource(str(split.path), counts[split.name])
            else:
                result[split.name] = IndexedDataset.load(folder / split.name, mmap=directory is not None)
    logger.info("read %d training and %d validation instances%s; %s", counts["train"], counts["validation"], how, vocab)
    return vocab, result


def _count_then_index(plan: DataPlan, folder: Path) -> tuple[Any, dict[str, int], str]:
    """The vocabulary from a counting read of every split, then each (not lazy) split indexed into ``folder``."""
    counters: dict[str, Counter] = {}
    workers = plan.read_workers
    token_splits = plan.vocabulary_splits if plan.vocabulary_splits is not None else tuple(s.name for s in plan.splits)
    counts: dict[str, int] = {}
    for split in plan.splits:
        split_counters: dict[str, Counter] = {}
        counts[split.name] = _count_split(split.reader, split.path, split_counters, workers) if split.path else 0
        _check_read_something(plan, split.name, counts)
        for namespace, counter in split_counters.items():
            if split.name in token_splits or not plan.vocabulary.is_padded(namespace):
                counters.setdefault(namespace, Counter()).update(counter)
    vocab = fixed_vocabulary(plan.vocabulary) or Vocabulary.from_counters(
        counters, plan.vocabulary, base_vocabulary(plan.vocabulary, plan.model_archive))
    del counters
    for split in plan.splits:
        if counts[split.name] and not split.lazy:
            _index_split(split.reader, split.path, vocab, folder / split.name, workers)
    return vocab, counts, ""


class _VocabularyNeeded(Exception):
    """An instance has a field that adds to the vocabulary: the data needs its counting pass."""


def _adds_to_vocabulary(field: Any) -> bool:
    return type(field).count_vocab_items is not Field.count_vocab_items


def _index_in_one_pass(plan: DataPlan, folder: Path) -> tuple[Any, dict[str, int], str] | None:
    """Index every split into ``folder`` in a single read when no instance adds to the vocabulary (e.g. a
    pretrained tokenizer's ids), skipping the counting pass; None when the data needs it (a field that counts
    vocabulary items, met at any instance, or a streamed split, which is only counted)."""
    if any(split.path and split.lazy for split in plan.splits):
        return None
    fixed = fixed_vocabulary(plan.vocabulary)  # the vocabulary is given: nothing to count
    vocab = fixed or Vocabulary.from_counters({}, plan.vocabulary, base_vocabulary(plan.vocabulary, plan.model_archive))
    counts: dict[str, int] = {}
    for split in plan.splits:
        try:
            counts[split.name] = (_index_split(split.reader, split.path, vocab, folder / split.name, plan.read_workers,
                                               vocabulary_free=fixed is None) if split.path else 0)
        except _VocabularyNeeded:
            for written in plan.splits:  # the counting read rewrites them from scratch
                shutil.rmtree(folder / written.name, ignore_errors=True)
            return None
        _check_read_something(plan, split.name, counts)
    return vocab, counts, " in one pass (no field adds to the vocabulary)"


def _check_read_something(plan: DataPlan, name: str, counts: dict[str, int]) -> None:
    if name == "train" and not counts[name]:
        raise ConfigError([Problem("train_data_path", f"no instances read from {plan.train.path}")])


def _check_streamed_shares(plan: DataPlan, world: World | None = None) -> None:
    """A lazy split is read by world size x loader processes readers: fail now if it cannot be split."""
    world_size = world.dp_size if world is not None else plan.dp_size
    for split in plan.splits:
        if split.path and split.lazy:
            split.reader.check_shares(split.path, world_size * max(1, split.loader.num_workers))


def _count_split(reader: DatasetReader, path: str, counters: dict[str, Counter], workers: int = 0) -> int:
    """Count vocabulary items and instances, keeping no instance (with ``workers`` > 1, in that many
    processes, each counting its share)."""
    if workers > 1:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with multiprocessing.get_context(method).Pool(workers) as pool:
            shares = pool.starmap(_count_share, [(reader, path, w, workers) for w in range(workers)])
        for share_counters, _ in shares:
            for namespace, counter in share_counters.items():
                counters.setdefault(namespace, Counter()).update(counter)
        return sum(count for _, count in shares)
    count = 0
    for instance in reader.read(path):
        for field in instance.values():
            field.count_vocab_items(counters)
        count += 1
    return count


def _count_share(reader: DatasetReader, path: str, worker: int, workers: int) -> tuple[dict[str, Counter], int]:
    reader.set_shard(ReaderShard(worker=worker, num_workers=workers))
    counters: dict[str, Counter] = {}
    return counters, _count_split(reader, path, counters)


def _index_split(reader: DatasetReader, path: str, vocab: Any, directory: Any, workers: int = 0,
                 vocabulary_free: bool = False) -> int:
    """Index every instance into ``directory`` as it is read. With ``workers`` > 1 the shares of
    that many readers are concatenated in worker order: every record once, in an order that depends
    on ``num_workers`` but never on the world size (the cache key includes it). ``vocabulary_free``:
    raise :class:`_VocabularyNeeded` (leaving nothing behind) at the first field that counts items."""
    writer = IndexedDatasetWriter(directory, vocab)
    number = 0
    try:
        for number, instance in enumerate(_instances(reader, path, workers), start=1):
            if vocabulary_free and any(_adds_to_vocabulary(field) for field in instance.values()):
                raise _VocabularyNeeded
            writer.add(instance)
    except UnknownLabel as error:
        writer.abort()
        raise DataError(f"{path}: instance {number}: {error}") from None
    except BaseException:
        writer.abort()
        raise
    return writer.close()


def _instances(reader: DatasetReader, path: str, workers: int):
    if workers <= 1:
        yield from reader.read(path)
        return
    whole = reader.shard
    try:
        for worker in range(workers):
            reader.set_shard(ReaderShard(worker=worker, num_workers=workers))
            yield from reader.read(path)
    finally:
        reader.set_shard(whole)
