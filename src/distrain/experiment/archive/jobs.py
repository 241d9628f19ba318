"""Run an archived model over a data file (``distrain evaluate`` / ``predict``), on one process or many.

The archive's config says how to read the data (its validation reader); a ``distributed`` block given
with ``-o`` starts one worker per device, each scoring its slice (see :mod:`distrain.training.evaluation`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import torch

from distrain.config.errors import ConfigError, Problem
from distrain.config.loading import apply_overrides
from distrain.config.schema import resolve_object
from distrain.data.dataset import IndexedDataset
from distrain.data.loader import DataLoader, DataLoaderConfig
from distrain.data.reader import DataError
from distrain.distributed.config import DistributedConfig
from distrain.distributed.world import World
from distrain.experiment.archive.format import load_archive
from distrain.experiment.plan import resolve_experiment
from distrain.models.model import Model
from distrain.plugins import import_builtins
from distrain.job.disk import write_lines_atomically, write_text_atomically
from distrain.training.evaluation import evaluate, predict


@dataclass
class ArchiveJob:
    """A loaded model, the data file read with the archive's reader, and how to run over it."""

    model: Model
    dataset: Any
    data_path: str
    loader: DataLoaderConfig
    distributed: DistributedConfig | None


def load_job(
    archive_path: str, data_path: str, overrides: dict[str, Any], batch_size: int | None = None,
    predicting: bool = False,
) -> ArchiveJob:
    """Load the archive (``overrides`` applied to its config) and read ``data_path`` with its
    ``validation_dataset_reader`` (else ``dataset_reader``), or, ``predicting``, with the reader the
    model predicts from (:meth:`~distrain.models.model.Model.prediction_reader`). Only a ``distributed`` block given in
    ``overrides`` launches workers: the one stored from training named that machine's devices."""
    archive, experiment = load_for_inference(archive_path, overrides)
    distributed = None
    requested = apply_overrides({}, overrides).get("distributed")
    if requested is not None:
        problems: list[Problem] = []
        plan = resolve_object(DistributedConfig, requested, "distributed", problems)
        if problems:
            raise ConfigError(problems)
        distributed = plan.build()
        if distributed.problems():
            raise ConfigError(distributed.problems())
    reader = experiment.validation_dataset_reader
    if predicting:
        reader = archive.model.prediction_reader(reader)
    dataset = read_dataset(reader, data_path, archive.vocab)
    loader = dataclasses.replace(
        experiment.validation_data_loader, shuffle=False, drop_last=False,
        batch_size=batch_size or experiment.validation_data_loader.batch_size,
    )
    return ArchiveJob(archive.model, dataset, str(data_path), loader, distributed)


def load_for_inference(archive_path: str, overrides: dict[str, Any]) -> tuple[Any, Any]:
    """The archive (model in eval mode, ``overrides`` applied, its ``distributed`` block dropped: it
    named the training machine's devices) and its built experiment, whose
    ``validation_dataset_reader`` reads inputs as ``distrain predict`` and ``distrain serve`` do."""
    import_builtins()
    model_overrides = {key: value for key, value in overrides.items() if key.split(".")[0] != "distributed"}
    archive = load_archive(archive_path, {"distributed": None, **model_overrides})
    return archive, resolve_experiment(archive.config).build()


def read_dataset(reader: Any, data_path: str, vocab: Any) -> Any:
    """Read and index a data file with the model's vocabulary; bad records name ``file:line``."""
    instances = list(reader.read(data_path))
    if not instances:
        raise DataError(f"{data_path}: no instances to read")
    try:
        return IndexedDataset.from_instances(instances, vocab)
    except KeyError as error:
        raise DataError(f"{data_path}: {error.args[0]} (the model's vocabulary cannot index it)") from None
    except ValueError as error:
        raise DataError(f"{data_path}: {error}") from None


def _has_gold(model: Model, dataset: Any) -> bool:
    """Whether the model computes a loss on the first instance (i.e. the data has gold labels)."""
    import numpy as np

    with torch.inference_mode(), model.metrics_frozen():
        return "loss" in model(**dataset.batch(np.arange(1)))


def require_gold(job: ArchiveJob) -> None:
    if not _has_gold(job.model, job.dataset):
        raise DataError(f"{job.data_path}: no gold labels to score against (the model computed no loss)")


def place_model(world: World, model: Model, distributed: DistributedConfig | None) -> None:
    """Move the model to this worker's device and split it as the ``distributed`` block asks
    (tensor parallel: ranks of one data-parallel coordinate share each batch and split its layers)."""
    model.to(world.device)
    if distributed is not None and distributed.model_split > 1:
        from distrain.distributed.config import build_parallelism
        from distrain.training.parallelize import split

        split(model, build_parallelism(distributed, world))


def tensor_parallel_config(size: int) -> DistributedConfig:
    """``size`` CPU processes splitting one model copy by tensor parallelism (``serve --tensor-parallel``)."""
    problems: list[Problem] = []
    plan = resolve_object(DistributedConfig, {"cuda_devices": [-1] * size, "tensor_parallel_size": size},
                          "distributed", problems)
    if problems:
        raise ConfigError(problems)
    return plan.build()


def _place(world: World, job: ArchiveJob) -> None:
    place_model(world, job.model, job.distributed)


def evaluate_worker(world: World, job: ArchiveJob, output_file: str) -> None:
    _place(world, job)
    metrics = evaluate(job.model, DataLoader(job.dataset, job.loader, world), world.device)
    if world.is_primary:
        write_text_atomically(output_file, json.dumps(metrics, indent=2) + "\n")


def predict_worker(world: World, job: ArchiveJob, output_file: str) -> None:
    _place(world, job)
    records = predict(job.model, DataLoader(job.dataset, job.loader, world), world.device)
    if world.is_primary:
        write_lines_atomically(output_file, (json.dumps(record) + "\n" for record in records))
