"""Read the data once: every split read and indexed, the vocabulary built, through the shared cache.

The parent of spawned workers calls :func:`prepare_data` before starting them, so workers only map
the result; under torchrun each rank calls it with its world and rank 0 builds the cache entry.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from distrain.config.errors import ConfigError, Problem
from distrain.data.reader import DatasetReader
from distrain.distributed.world import World
from distrain.experiment import Experiment, resolve_experiment

logger = logging.getLogger(__name__)


@dataclass
class PreparedData:
    """The vocabulary and each split: an IndexedDataset (memory-mapped when cached), a
    :class:`~distrain.data.streaming.StreamingSource` for a ``lazy`` loader, or None."""

    vocab: Any
    train: Any
    validation: Any | None


def prepare_for_workers(config: dict[str, Any], world: World | None) -> PreparedData:
    """:func:`prepare_data` for a validated config (what a training job reads before its workers run)."""
    return prepare_data(resolve_experiment(config).build(), config, world)


def prepare_data(experiment: Experiment, config: dict[str, Any] | None = None, world: World | None = None) -> PreparedData:
    """Read and index the data once, through the shared cache when enabled.

    ``config`` is the evaluated config (its data keys are part of the cache key; None: no cache).
    With a cache entry for this data the files are not read again. Under torchrun (``world``
    distributed, no parent) rank 0 builds the entry while the others wait, then all map it.
    """
    _check_streamed_shares(experiment, world)
    cache, key = _cache_and_key(experiment, config)
    if cache is None:
        vocab, splits = read_data(experiment)
        return PreparedData(vocab, splits["train"], splits.get("validation"))
    if world is not None and world.is_distributed:
        from distrain.data.reader import DataError
        from distrain.distributed.collectives import broadcast_object

        problem: Exception | None = None
        if world.is_primary:
            try:
                _open_entry(experiment, cache, key)
            except Exception as error:  # noqa: BLE001 - told to the waiting ranks, then re-raised
                problem = error
        # Doubles as the barrier: the other ranks wait here until rank 0 has built the entry or failed.
        failure = broadcast_object(None if problem is None else str(problem))
        if problem is not None:
            raise problem
        if failure is not None:
            raise DataError(f"rank 0 could not prepare the data: {failure}")
    entry = _open_entry(experiment, cache, key)
    vocab, splits = cache.load(entry)
    splits = {name: _streaming_source_or(splits.get(name), name, experiment, entry) for name in ("train", "validation")}
    return PreparedData(vocab, splits["train"], splits.get("validation"))


def _open_entry(experiment: Experiment, cache: Any, key: str) -> Any:
    """The verified entry for ``key``: reused, or built once (concurrent runs wait for the builder)."""
    started = time.monotonic()
    entry, built = cache.open(key, lambda directory: _build_entry(experiment, directory))
    if built:
        logger.info("read the data in %.1f s and cached it in %s", time.monotonic() - started, entry)
    else:
        logger.info("dataset cache hit: %s (data not re-read; DISTRAIN_CACHE=off to disable)", entry)
    return entry


def _cache_and_key(experiment: Experiment, config: dict[str, Any] | None):
    from distrain.data.cache import DatasetCache, cache_root, fingerprint

    root = cache_root()
    if root is None or not experiment.dataset_cache or config is None:
        return None, None
    data_config = {name: config.get(name) for name in (
        "dataset_reader", "validation_dataset_reader", "train_data_path", "validation_data_path", "vocabulary")}
    data_config["lazy"] = [_is_lazy(experiment.data_loader), _is_lazy(experiment.validation_data_loader)]
    data_config["read_workers"] = experiment.data_loader.num_workers
    paths = [p for p in (experiment.train_data_path, experiment.validation_data_path) if p]
    readers = [experiment.dataset_reader, experiment.validation_dataset_reader]
    return DatasetCache(root), fingerprint(data_config, paths, code=readers)


def _is_lazy(loader: Any) -> bool:
    return bool(getattr(loader, "lazy", False))


def _build_entry(experiment: Experiment, directory: Any) -> dict[str, Any]:
    """Write the entry's files into ``directory``; return its meta."""
    _vocab, splits = read_data(experiment, directory)
    return {
        "train_data_path": experiment.train_data_path,
        "validation_data_path": experiment.validation_data_path,
        "splits": {name: (len(split) if split is not None and not _is_streamed(split) else None)
                   for name, split in splits.items()},
        "streaming_counts": {name: split.num_instances for name, split in splits.items() if _is_streamed(split)},
    }


def _is_streamed(split: Any) -> bool:
    from distrain.data.streaming import StreamingSource

    return isinstance(split, StreamingSource)


def _streaming_source_or(split: Any, name: str, experiment: Experiment, entry: Any) -> Any:
    """A lazy split is cached as its vocabulary and count only; rebuild its source from the meta."""
    from distrain.data.streaming import StreamingSource

    counts = json.loads((entry / "meta.json").read_text()).get("streaming_counts", {})
    if name in counts:
        path = experiment.train_data_path if name == "train" else experiment.validation_data_path
        return StreamingSource(str(path), counts[name])
    return split


def read_data(experiment: Experiment, directory: Any = None) -> tuple[Any, dict[str, Any]]:
    """Read every split and build the vocabulary. Token namespaces come from the training data; label
    namespaces also from validation data, so an unseen validation label does not crash indexing.
    A split whose loader is ``lazy`` is only counted here (memory stays flat) and streamed later.

    Memory stays bounded by a chunk of instances, whatever the input size: a first pass counts the
    vocabulary items, a second indexes each instance into the columnar files as it is read. When no
    field adds to the vocabulary (a pretrained tokenizer's ids), the data is read once. With
    ``directory`` the vocabulary and splits are written there and returned memory-mapped; without
    it they are built in a temporary folder and loaded into memory."""
    import tempfile
    from pathlib import Path

    from distrain.data.dataset import IndexedDataset
    from distrain.data.streaming import StreamingSource
    from distrain.data.vocabulary import Vocabulary, is_padded

    one_pass = _read_in_one_pass(experiment, directory)
    if one_pass is not None:
        return one_pass
    counters: dict[str, Counter] = {}
    workers = experiment.data_loader.num_workers
    train_count = _count_split(experiment.dataset_reader, experiment.train_data_path, counters, workers)
    if not train_count:
        raise ConfigError([Problem("train_data_path", f"no instances read from {experiment.train_data_path}")])
    validation_count = 0
    if experiment.validation_data_path:
        validation_counters: dict[str, Counter] = {}
        validation_count = _count_split(
            experiment.validation_dataset_reader, experiment.validation_data_path, validation_counters, workers)
        for namespace, counter in validation_counters.items():
            if not is_padded(namespace):
                counters.setdefault(namespace, Counter()).update(counter)
    vocab = Vocabulary.from_counters(counters, experiment.vocabulary)
    del counters
    splits = [("train", experiment.dataset_reader, experiment.train_data_path, experiment.data_loader, train_count),
              ("validation", experiment.validation_dataset_reader, experiment.validation_data_path,
               experiment.validation_data_loader, validation_count)]
    with tempfile.TemporaryDirectory(prefix="distrain-index-") as scratch:
        folder = Path(directory) if directory is not None else Path(scratch)
        vocab.save(folder / "vocabulary")
        result: dict[str, Any] = {}
        for name, reader, path, loader, count in splits:
            if not count:
                result[name] = None
            elif _is_lazy(loader):
                result[name] = StreamingSource(str(path), count)
            else:
                _index_split(reader, path, vocab, folder / name, workers)
                result[name] = IndexedDataset.load(folder / name, mmap=directory is not None)
    logger.info("read %d training and %d validation instances; %s", train_count, validation_count, vocab)
    return vocab, result


class _VocabularyNeeded(Exception):
    """An instance has a field that adds to the vocabulary: the data needs its counting pass."""


def _adds_to_vocabulary(field: Any) -> bool:
    from distrain.data.fields import Field

    return type(field).count_vocab_items is not Field.count_vocab_items


def _read_in_one_pass(experiment: Experiment, directory: Any = None) -> tuple[Any, dict[str, Any]] | None:
    """Index every split in a single read when no instance adds to the vocabulary (e.g. a pretrained
    tokenizer's ids), skipping the counting pass; None when the data needs it (a field that counts
    vocabulary items, met at any instance, or a streamed split, which is only counted)."""
    import tempfile
    from pathlib import Path

    from distrain.data.dataset import IndexedDataset
    from distrain.data.vocabulary import Vocabulary

    splits = [("train", experiment.dataset_reader, experiment.train_data_path, experiment.data_loader),
              ("validation", experiment.validation_dataset_reader, experiment.validation_data_path,
               experiment.validation_data_loader)]
    if any(path and _is_lazy(loader) for _, _, path, loader in splits):
        return None
    workers = experiment.data_loader.num_workers
    vocab = Vocabulary.from_counters({}, experiment.vocabulary)
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="distrain-index-") as scratch:
        folder = Path(directory) if directory is not None else Path(scratch)
        result: dict[str, Any] = {}
        for name, reader, path, _loader in splits:
            try:
                counts[name] = _index_split(reader, path, vocab, folder / name, workers, vocabulary_free=True) if path else 0
            except _VocabularyNeeded:
                import shutil

                for written, *_ in splits:  # the counting read rewrites them from scratch
                    shutil.rmtree(folder / written, ignore_errors=True)
                return None
            if name == "train" and not counts[name]:
                raise ConfigError([Problem("train_data_path", f"no instances read from {experiment.train_data_path}")])
            result[name] = IndexedDataset.load(folder / name, mmap=directory is not None) if counts[name] else None
        vocab.save(folder / "vocabulary")
    logger.info("read %d training and %d validation instances in one pass (no field adds to the vocabulary); %s",
                counts["train"], counts["validation"], vocab)
    return vocab, result


def _check_streamed_shares(experiment: Experiment, world: World | None = None) -> None:
    """A lazy split is read by world size x loader processes readers: fail now if it cannot be split."""
    if world is not None:
        world_size = world.dp_size
    else:
        world_size = experiment.distributed.dims().dp_size if experiment.distributed is not None else 1
    splits = [(experiment.dataset_reader, experiment.train_data_path, experiment.data_loader),
              (experiment.validation_dataset_reader, experiment.validation_data_path, experiment.validation_data_loader)]
    for reader, path, loader in splits:
        if path and _is_lazy(loader):
            reader.check_shares(path, world_size * max(1, loader.num_workers))


def _count_split(reader: DatasetReader, path: str, counters: dict[str, Counter], workers: int = 0) -> int:
    """Count vocabulary items and instances, keeping no instance (with ``workers`` > 1, in that many
    processes, each counting its share)."""
    if workers > 1:
        import multiprocessing

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
    from distrain.data.reader import ReaderShard

    reader.set_shard(ReaderShard(worker=worker, num_workers=workers))
    counters: dict[str, Counter] = {}
    return counters, _count_split(reader, path, counters)


def _index_split(reader: DatasetReader, path: str, vocab: Any, directory: Any, workers: int = 0,
                 vocabulary_free: bool = False) -> int:
    """Index every instance into ``directory`` as it is read. With ``workers`` > 1 the shares of
    that many readers are concatenated in worker order: every record once, in an order that depends
    on ``num_workers`` but never on the world size (the cache key includes it). ``vocabulary_free``:
    raise :class:`_VocabularyNeeded` (leaving nothing behind) at the first field that counts items."""
    from distrain.data.dataset_writer import IndexedDatasetWriter

    writer = IndexedDatasetWriter(directory, vocab)
    try:
        for instance in _instances(reader, path, workers):
            if vocabulary_free and any(_adds_to_vocabulary(field) for field in instance.values()):
                raise _VocabularyNeeded
            writer.add(instance)
    except BaseException:
        writer.abort()
        raise
    return writer.close()


def _instances(reader: DatasetReader, path: str, workers: int):
    if workers <= 1:
        yield from reader.read(path)
        return
    from distrain.data.reader import ReaderShard

    whole = reader.shard
    try:
        for worker in range(workers):
            reader.set_shard(ReaderShard(worker=worker, num_workers=workers))
            yield from reader.read(path)
    finally:
        reader.set_shard(whole)
