"""Score or run a trained model over a data file, on one process or on many.

Each worker gets only its slice of every batch (the loader's split), so metrics, reduced once
when read, count every instance exactly once; predictions carry their dataset index and are put
back in input order. :func:`evaluate` and :func:`predict` are rank-agnostic; the ``*_worker``
functions are what ``distrain evaluate`` / ``distrain predict`` run on every worker.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import torch

from distrain.data.loader import DataLoader, DataLoaderConfig, to_device
from distrain.distributed.config import DistributedConfig
from distrain.distributed.world import SINGLE, World
from distrain.models.model import Model


# ------------------------------------------------------------------------- rank-agnostic work
@torch.inference_mode()
def evaluate(
    model: Model, loader: DataLoader, device: torch.device | str = "cpu", autocast: Callable[[], Any] | None = None
) -> dict[str, float]:
    """The mean loss and every metric over ``loader``, each instance counted once over all workers.

    The loss is weighted by what each batch's mean is over: its samples, or the model's
    ``loss_weight`` (e.g. masked tokens), so the result is the global mean however data is split.
    ``autocast`` is a context factory for mixed precision (the trainer passes its own).
    """
    import contextlib

    from distrain.distributed.collectives import all_reduce_sum

    model.eval()
    _reset_metrics(model)
    autocast = autocast or contextlib.nullcontext
    loss_sum = torch.zeros((), dtype=torch.float64)
    weight_sum = torch.zeros((), dtype=torch.float64)
    for batch in loader:
        if batch.size == 0:
            continue  # a placeholder slice: this worker has no instances in this batch
        with autocast():
            output = model(**to_device(batch.inputs, device))
        if "loss" in output:
            weight = output["loss_weight"].double().cpu() if "loss_weight" in output else float(batch.size)
            loss_sum += output["loss"].double().cpu() * weight
            weight_sum += weight
    totals = all_reduce_sum(torch.stack([loss_sum, weight_sum]))
    metrics = model.get_metrics(reset=True)
    if totals[1] > 0:
        metrics = {"loss": float(totals[0] / totals[1]), **metrics}
    return metrics


@torch.inference_mode()
def predict(model: Model, loader: DataLoader, device: torch.device | str = "cpu") -> list[dict[str, Any]]:
    """One human-readable output per instance, in dataset order, on every worker."""
    from distrain.distributed.collectives import all_gather_object

    model.eval()
    mine: list[tuple[int, dict[str, Any]]] = []
    for batch in loader:
        if batch.size == 0:
            continue
        mine.extend(zip((int(i) for i in batch.indices), predict_inputs(model, batch.inputs, device)))
    _reset_metrics(model)  # labelled data fed the metrics; leave the model clean
    everyone = [pair for part in all_gather_object(mine) for pair in part]
    return [record for _, record in sorted(everyone, key=lambda pair: pair[0])]


@torch.inference_mode()
def predict_inputs(model: Model, inputs: dict[str, Any], device: torch.device | str = "cpu") -> list[dict[str, Any]]:
    """One human-readable output per item of one batch of model inputs (what ``distrain predict``
    writes per line, and what ``distrain serve`` answers per request)."""
    output = model(**to_device(inputs, device))
    return model.make_output_human_readable({k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in output.items()})


def _reset_metrics(model: Model) -> None:
    for metric in model.metrics.values():
        metric.reset()


# ------------------------------------------------------------------------ archive + data file
@dataclass
class ArchiveJob:
    """A loaded model, the data file read with the archive's reader, and how to run over it."""

    model: Model
    dataset: Any
    data_path: str
    loader: DataLoaderConfig
    distributed: DistributedConfig | None


def load_job(
    archive_path: str, data_path: str, overrides: dict[str, Any], batch_size: int | None = None
) -> ArchiveJob:
    """Load the archive (``overrides`` applied to its config) and read ``data_path`` with its
    ``validation_dataset_reader`` (else ``dataset_reader``). Only a ``distributed`` block given in
    ``overrides`` launches workers: the one stored from training named that machine's devices."""
    from distrain.config.errors import ConfigError, Problem
    from distrain.config.loading import apply_overrides
    from distrain.config.schema import resolve_object

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
    dataset = read_dataset(experiment.validation_dataset_reader, data_path, archive.vocab)
    loader = dataclasses.replace(
        experiment.validation_data_loader, shuffle=False, drop_last=False,
        batch_size=batch_size or experiment.validation_data_loader.batch_size,
    )
    return ArchiveJob(archive.model, dataset, str(data_path), loader, distributed)


def load_for_inference(archive_path: str, overrides: dict[str, Any]) -> tuple[Any, Any]:
    """The archive (model in eval mode, ``overrides`` applied, its ``distributed`` block dropped: it
    named the training machine's devices) and its built experiment, whose
    ``validation_dataset_reader`` reads inputs as ``distrain predict`` and ``distrain serve`` do."""
    from distrain.archive import load_archive
    from distrain.experiment import resolve_experiment
    from distrain.plugins import import_builtins

    import_builtins()
    model_overrides = {key: value for key, value in overrides.items() if key.split(".")[0] != "distributed"}
    archive = load_archive(archive_path, {"distributed": None, **model_overrides})
    return archive, resolve_experiment(archive.config).build()


def read_dataset(reader: Any, data_path: str, vocab: Any) -> Any:
    """Read and index a data file with the model's vocabulary; bad records name ``file:line``."""
    from distrain.data.dataset import IndexedDataset
    from distrain.data.reader import DataError

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
    from distrain.data.reader import DataError

    if not _has_gold(job.model, job.dataset):
        raise DataError(f"{job.data_path}: no gold labels to score against (the model computed no loss)")


def launch(job: ArchiveJob, worker: Callable[..., Any], *args: Any) -> None:
    """Run ``worker(world, job, *args)`` here, or on one spawned process per configured device."""
    if job.distributed is None:
        worker(SINGLE, job, *args)
        return
    from distrain.distributed.launch import spawn

    spawn(worker, (job, *args), job.distributed, None)


# ---------------------------------------------------------------------------------- workers
def evaluate_worker(world: World, job: ArchiveJob, output_file: str) -> None:
    job.model.to(world.device)
    metrics = evaluate(job.model, DataLoader(job.dataset, job.loader, world), world.device)
    if world.is_primary:
        write_atomically(output_file, [json.dumps(metrics, indent=2) + "\n"])


def predict_worker(world: World, job: ArchiveJob, output_file: str) -> None:
    job.model.to(world.device)
    records = predict(job.model, DataLoader(job.dataset, job.loader, world), world.device)
    if world.is_primary:
        write_atomically(output_file, (json.dumps(record) + "\n" for record in records))


def write_atomically(path: str | Path, chunks: Iterable[str]) -> None:
    """Write to a temporary file beside ``path``, then rename: never a half-written output."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.writelines(chunks)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
