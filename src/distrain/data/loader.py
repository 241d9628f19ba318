"""Per-worker data loading over the global batches of :mod:`distrain.data.sampler`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterator, Literal, Mapping, NamedTuple

import numpy as np

from distrain.config.constraints import NonNegativeInt, PositiveInt
from distrain.config.errors import ConfigError, Problem
from distrain.data.batch_sampler import BatchSampler
from distrain.data.dataset import IndexedDataset
from distrain.data.sampler import GlobalBatchSampler
from distrain.distributed.balance import split_counts
from distrain.job.heartbeat import beat
from distrain.distributed.world import SINGLE, World


#: samples per worker when neither ``batch_size`` nor ``global_batch_size`` is given
DEFAULT_BATCH_SIZE = 32

#: AllenNLP's data loaders: 1.x's ``pytorch_dataloader`` (torch's ``DataLoader``), 2.x's ``multiprocess`` and
#: ``simple``; each is this loader, with AllenNLP's defaults where the block names one (see :class:`DataLoaderConfig`)
AllenNLPLoader = Literal["pytorch_dataloader", "multiprocess", "simple"]


@dataclass
class SamplerChoice:
    """AllenNLP's ``sampler`` block of a ``pytorch_dataloader``: ``random`` is ``shuffle: true``, ``sequential``
    ``shuffle: false``."""

    type: Literal["random", "sequential"]


@dataclass
class DataLoaderConfig:
    """The ``data_loader`` block. ``batch_size`` and ``max_tokens_per_batch`` are per worker.

    ``lazy`` streams the data instead of indexing it up front: each worker (and each of its
    ``num_workers`` loader processes) reads only its share, holding at most
    ``max_instances_in_memory`` instances at a time (see :mod:`distrain.data.streaming`). Without
    ``lazy``, ``num_workers`` > 1 makes the parent read with that many processes (each its share),
    for readers with costly per-record work; the cached, indexed result is then shared as usual.
    ``sort_by_length`` and ``max_tokens_per_batch`` apply to the indexed (non-lazy) path only.

    ``batch_sampler`` (AllenNLP's key, e.g. ``{"type": "bucket", "sorting_keys": ["tokens"]}``) cuts the
    global batches instead; its ``batch_size``, when given, is the per-worker batch size, and it owns
    shuffling and ``drop_last`` (see :mod:`distrain.data.batch_samplers.bucket`).

    ``global_batch_size`` instead of ``batch_size``: the samples of one optimizer step on any world size;
    each worker's batch and the accumulation steps are derived when the world is known (capped per worker
    by ``max_micro_batch_size``; see :mod:`distrain.distributed.global_batch`).

    ``type`` names one of AllenNLP's loaders (:data:`AllenNLPLoader`), which take their AllenNLP defaults here:
    ``shuffle`` false unless given (distrain's own default is true), and for 1.x's ``pytorch_dataloader`` a
    ``batch_size`` of 1 unless given. Their other keys: ``sampler`` (``random`` or ``sequential``, the same as
    ``shuffle``), and ``pin_memory``, ``timeout``, ``multiprocessing_context``, ``start_method`` and ``quiet``, which
    change nothing here (batches are copied to the device without blocking either way, the hang watchdog stands
    for a loader's timeout, and distrain picks its processes' start method itself).
    """

    batch_size: PositiveInt | None = None
    shuffle: bool | None = None
    drop_last: bool = False
    sort_by_length: bool = False
    max_tokens_per_batch: PositiveInt | None = None
    lazy: bool = False
    num_workers: NonNegativeInt = 0
    max_instances_in_memory: PositiveInt | None = None
    batch_sampler: BatchSampler | None = None
    global_batch_size: PositiveInt | None = None
    max_micro_batch_size: PositiveInt | None = None
    type: AllenNLPLoader | None = None
    sampler: Literal["random", "sequential"] | SamplerChoice | None = None
    pin_memory: bool = False
    timeout: NonNegativeInt = 0
    multiprocessing_context: Literal["fork", "spawn", "forkserver"] | None = None
    start_method: Literal["fork", "spawn", "forkserver"] | None = None
    quiet: bool = False

    def __post_init__(self) -> None:
        if self.batch_sampler is not None and self.batch_sampler.batch_size is not None:
            self.batch_size = self.batch_sampler.batch_size
        sampler = self.sampler.type if isinstance(self.sampler, SamplerChoice) else self.sampler
        if self.shuffle is None:
            self.shuffle = sampler == "random" if sampler is not None else self.type is None
        if self.batch_size is None and self.global_batch_size is None and self.batch_sampler is None:
            self.batch_size = 1 if self.type == "pytorch_dataloader" else None
        if self.batch_size is None and self.global_batch_size is None:
            self.batch_size = DEFAULT_BATCH_SIZE
        # with global_batch_size, batch_size is set for the world at hand (see for_world)

    def for_world(self, workers: int, shares: tuple[float, ...] | None, world_size: int) -> tuple[DataLoaderConfig, int]:
        """This config with each worker's ``batch_size`` for ``workers`` data-parallel workers, and the
        accumulation steps a global batch takes (1 unless ``global_batch_size`` says otherwise)."""
        if self.global_batch_size is None:
            return self, 1
        from distrain.distributed.global_batch import split_global_batch

        split = split_global_batch(self.global_batch_size, workers, shares, self.max_micro_batch_size, world_size)
        return dataclasses.replace(self, batch_size=split.batch_size), split.accumulation

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """``sort_by_length`` and ``max_tokens_per_batch`` need the whole split indexed: not with ``lazy``;
        with a ``batch_sampler`` the sampler alone decides the batches."""
        problems = []
        if arguments["lazy"]:
            problems += [Problem(key, "applies to indexed loading only; it cannot be used with lazy")
                         for key in ("sort_by_length", "max_tokens_per_batch", "batch_sampler")
                         if arguments[key] not in (False, None)]
        chosen = arguments["sampler"]
        chosen = chosen.argument("type") if hasattr(chosen, "argument") else chosen
        if chosen is not None and arguments["shuffle"] is not None and arguments["shuffle"] != (chosen == "random"):
            problems.append(Problem("sampler", f'"{chosen}" contradicts shuffle: {str(arguments["shuffle"]).lower()}; '
                                               "keep one"))
        if chosen is not None and arguments["batch_sampler"] is not None:
            problems.append(Problem("sampler", "cannot be combined with batch_sampler, which orders the batches"))
        sampler = arguments["batch_sampler"]
        if sampler is not None and not arguments["lazy"]:
            problems += [Problem(key, "is decided by batch_sampler; set it there") for key, changed in
                         (("shuffle", False), ("drop_last", True)) if arguments[key] == changed]
            problems += [Problem(key, "cannot be combined with batch_sampler") for key in
                         ("sort_by_length", "max_tokens_per_batch") if arguments[key] not in (False, None)]
            size = sampler.argument("batch_size")
            if size is not None and arguments["batch_size"] not in (size, None):
                problems.append(Problem("batch_size", f"{arguments['batch_size']} differs from batch_sampler.batch_size "
                                                      f"({size}); keep one"))
        if arguments["global_batch_size"] is not None:
            given = [key for key in ("batch_size",) if arguments[key] is not None]
            if sampler is not None and sampler.argument("batch_size") is not None:
                given.append("batch_sampler.batch_size")
            problems += [Problem(key, "cannot be given with global_batch_size: each worker's batch follows from it "
                                      "and the world size") for key in given]
            if arguments["lazy"]:
                problems.append(Problem("global_batch_size", "applies to indexed loading only; it cannot be used "
                                                             "with lazy"))
        elif arguments["max_micro_batch_size"] is not None:
            problems.append(Problem("max_micro_batch_size", "caps the micro-batches of global_batch_size; give that"))
        return problems


class Batch(NamedTuple):
    inputs: dict[str, Any]
    #: samples this worker holds (0: ``inputs`` is a placeholder that must carry zero weight)
    size: int
    #: samples in the whole global batch, over all workers
    global_size: int
    #: positions of this worker's samples in the dataset
    indices: np.ndarray


class DataLoader:
    """Yields this worker's slice of every global batch (by its data-parallel rank); every worker yields the same count."""

    def __init__(self, dataset: IndexedDataset, config: DataLoaderConfig, world: World = SINGLE, seed: int = 0) -> None:
        self.dataset = dataset
        self.config = config
        self.world = world
        needs_lengths = config.sort_by_length or config.max_tokens_per_batch is not None
        self.sampler = GlobalBatchSampler(
            size=len(dataset),
            batch_size=config.batch_size * world.dp_size,
            shuffle=config.shuffle,
            seed=seed,
            drop_last=config.drop_last,
            lengths=dataset.lengths() if needs_lengths else None,
            sort_by_length=config.sort_by_length,
            max_tokens=config.max_tokens_per_batch * world.dp_size if config.max_tokens_per_batch else None,
            batch_sampler=config.batch_sampler,
            field_lengths=self._field_lengths if config.batch_sampler is not None else None,
        )
        self.epoch = 0
        #: shares set while training (``device_weights: auto``), instead of the world's fixed ones
        self.shares: tuple[float, ...] | None = None

    def _field_lengths(self, name: str | None) -> np.ndarray:
        try:
            return self.dataset.field_lengths(name)
        except KeyError:
            fields = ", ".join(self.dataset.field_names())
            raise ConfigError([Problem("data_loader.batch_sampler.sorting_keys",
                                       f'"{name}" is not a field of the data; its fields: {fields}')]) from None

    def use_shares(self, shares: tuple[float, ...]) -> None:
        """Split the global batches from the next one on by ``shares`` (one per data-parallel rank)."""
        self.shares = shares

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.sampler.batches(self.epoch))

    def slice_counts(self, batch_length: int) -> list[int]:
        """How many samples of a global batch of ``batch_length`` each data-parallel rank receives."""
        if self.world.dp_size == 1:
            return [batch_length]
        return split_counts(batch_length, self.shares or self.world.shares())

    def my_slice(self, batch: np.ndarray) -> np.ndarray:
        if self.world.dp_size == 1:
            return batch
        counts = self.slice_counts(len(batch))
        start = sum(counts[: self.world.dp_rank])
        return batch[start : start + counts[self.world.dp_rank]]

    def __iter__(self) -> Iterator[Batch]:
        for batch in self.sampler.batches(self.epoch):
            beat()  # progress, for the hang watchdog
            mine = self.my_slice(batch)
            if len(mine):
                yield Batch(self.dataset.batch(mine), len(mine), len(batch), mine)
            else:
                yield Batch(self.dataset.batch(batch[:1]), 0, len(batch), mine)


def to_device(inputs: dict[str, Any], device: Any) -> dict[str, Any]:
    """A batch's tensors moved to ``device`` (non-tensor fields such as metadata stay as they are)."""
    import torch

    device = torch.device(device)
    if device.type == "cpu":
        return inputs
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor)
            else to_device(v, device) if isinstance(v, dict) else v for k, v in inputs.items()}
